// Package testcache keeps what tests make once per machine and reuse
// across runs and test binaries (a migrated database, a split copy of
// the OpenAPI description), under the user's cache directory. A cached
// item's name must change with what it is made from (a digest in the
// name): nothing is ever made again. It imports nothing of forgeapi, so
// tests of every floor can use it.
package testcache

import (
	"os"
	"path/filepath"
)

// File returns the path of the file name in the test cache's
// directory of kind (under the user's cache directory), making it with
// build when it is missing. build writes a temporary path that is then
// renamed into place: test binaries running at once may make the same
// file, and none reads a half-made one. Names must change with what
// the file is made from (a digest in the name), as nothing is ever
// remade.
func File(kind, name string, build func(tmp string) error) (string, error) {
	dir, err := folder(kind)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	tmp, err := os.CreateTemp(dir, ".make-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if err := build(tmp.Name()); err != nil {
		return "", err
	}
	return file, os.Rename(tmp.Name(), file)
}

// Dir is File for a folder: build fills a temporary folder
// that is then renamed into place. When another test binary renamed its
// own into place first, that one is kept.
func Dir(kind, name string, build func(tmp string) error) (string, error) {
	parent, err := folder(kind)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, name)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(parent, ".make-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return dir, nil // made by another binary meanwhile
		}
		return "", err
	}
	return dir, nil
}

// folder returns the test cache's folder of kind, under the user's
// cache directory (the system's temporary one when there is none),
// making it when missing.
func folder(kind string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "forgeapi-test", kind)
	return dir, os.MkdirAll(dir, 0o755)
}
