package apptest

import (
	"os"
	"path/filepath"
)

// cachedFile returns the path of the file name in the test cache's
// directory of kind (under the user's cache directory), making it with
// build when it is missing. build writes a temporary path that is then
// renamed into place: test binaries running at once may make the same
// file, and none reads a half-made one. Names must change with what
// the file is made from (a digest in the name), as nothing is ever
// remade.
func cachedFile(kind, name string, build func(tmp string) error) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "forgeapi-test", kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
