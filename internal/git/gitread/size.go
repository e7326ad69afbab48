package gitread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SizeKB returns the size of the git data of the bare repository at dir
// in KB, as git count-objects counts it (its size plus size-pack): the
// disk space of the loose objects (their blocks), plus the bytes of each
// pack and its index, each sum rounded down to KB. Objects of a push not
// yet accepted (git's quarantine directory) and files that are not
// objects are left out; so are objects borrowed through alternates. It
// reads directories and file metadata only, never objects.
func SizeKB(dir string) (int64, error) {
	objects := filepath.Join(dir, "objects")
	loose, err := looseBytes(objects)
	if err != nil {
		return 0, err
	}
	packs, err := packBytes(filepath.Join(objects, "pack"))
	if err != nil {
		return 0, err
	}
	return loose/1024 + packs/1024, nil
}

// looseBytes sums the disk space of the loose objects under objects: the
// regular files named by the hex digits of an object id in its two-digit
// fan-out directories.
func looseBytes(objects string) (int64, error) {
	fanout, err := os.ReadDir(objects)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, ErrRepositoryNotFound
		}
		return 0, err
	}
	var total int64
	for _, d := range fanout {
		if !d.IsDir() || len(d.Name()) != 2 || !isHex(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, d.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by git gc while we read
			}
			return 0, err
		}
		for _, f := range files {
			if n := len(f.Name()); (n != 38 && n != 62) || !isHex(f.Name()) || !f.Type().IsRegular() {
				continue
			}
			info, err := f.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // packed and pruned while we read
				}
				return 0, err
			}
			total += diskBytes(info)
		}
	}
	return total, nil
}

// packBytes sums the sizes of the packs in dir that have an index, and
// of their indexes.
func packBytes(dir string) (int64, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	var total int64
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		idx, err := f.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed by git gc while we read
			}
			return 0, err
		}
		pack, err := os.Stat(filepath.Join(dir, name+".pack"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return 0, err
		}
		total += idx.Size() + pack.Size()
	}
	return total, nil
}
