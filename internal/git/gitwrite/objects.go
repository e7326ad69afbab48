package gitwrite

import (
	"bufio"
	"compress/zlib"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/hash"
)

// objectID is the SHA-1 name of an object of type kind ("blob", "tree",
// "commit") and content data, as git computes it; content crafted for a
// SHA-1 collision attack is refused, as git's collision-detecting SHA-1
// refuses it.
func objectID(kind string, data []byte) (plumbing.Hash, error) {
	h := hash.New(crypto.SHA1)
	header := kind + " " + strconv.Itoa(len(data)) + "\x00"
	var id plumbing.Hash
	if cd, ok := h.(interface {
		CollisionResistantSum([]byte) ([]byte, bool)
	}); ok {
		_, _ = io.WriteString(h, header)
		_, _ = h.Write(data)
		sum, collision := cd.CollisionResistantSum(nil)
		if collision {
			return id, errors.New("gitwrite: SHA-1 appears to be part of a collision attack")
		}
		copy(id[:], sum)
		return id, nil
	}
	_, _ = io.WriteString(h, header)
	_, _ = h.Write(data)
	copy(id[:], h.Sum(nil))
	return id, nil
}

// writeObject stores an object as git stores a new loose object: zlib
// (git's default loose compression, the fastest level) of "kind size\0"
// and the content, in objects/xx/yyyy..., written read-only to a
// temporary file beside it and linked into place, without fsync (git's
// default core.fsync leaves loose objects out). An object that is there
// already as a loose object has its time refreshed instead, as git
// freshens it (so that a concurrent prune keeps it); one that is only in
// a pack is written loose (git would freshen the pack; a loose copy of a
// packed object is harmless and `git gc` drops it).
func writeObject(dir, kind string, data []byte) (plumbing.Hash, error) {
	id, err := objectID(kind, data)
	if err != nil {
		return id, err
	}
	name := hex.EncodeToString(id[:])
	fanout := filepath.Join(dir, "objects", name[:2])
	final := filepath.Join(fanout, name[2:])
	now := time.Now()
	if err := os.Chtimes(final, now, now); err == nil {
		return id, nil
	}
	tmp, err := createTemp(fanout)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(fanout, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return id, fmt.Errorf("gitwrite: %w", err)
		}
		tmp, err = createTemp(fanout)
	}
	if err != nil {
		return id, fmt.Errorf("gitwrite: %w", err)
	}
	defer os.Remove(tmp.Name())
	err = deflateTo(tmp, kind, data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return id, fmt.Errorf("gitwrite: write object %s: %w", name, err)
	}
	if err := os.Link(tmp.Name(), final); err != nil && !errors.Is(err, os.ErrExist) {
		return id, fmt.Errorf("gitwrite: write object %s: %w", name, err)
	}
	return id, nil
}

// A compressor's state is large (hundreds of kilobytes): they are reused.
var (
	zlibWriters = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return w
	}}
	bufWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}
)

// deflateTo writes the loose object form of the object to w.
func deflateTo(w io.Writer, kind string, data []byte) error {
	bw := bufWriters.Get().(*bufio.Writer)
	zw := zlibWriters.Get().(*zlib.Writer)
	defer func() {
		bw.Reset(nil)
		zw.Reset(nil)
		bufWriters.Put(bw)
		zlibWriters.Put(zw)
	}()
	bw.Reset(w)
	zw.Reset(bw)
	_, err := io.WriteString(zw, kind+" "+strconv.Itoa(len(data))+"\x00")
	if err == nil {
		_, err = zw.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// createTemp creates a read-only temporary object file in dir, named as
// git names them.
func createTemp(dir string) (*os.File, error) {
	for {
		f, err := os.OpenFile(filepath.Join(dir, "tmp_obj_"+strconv.FormatUint(rand.Uint64(), 36)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
}
