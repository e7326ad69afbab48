package advisory

import (
	"archive/zip"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Record is one advisory read by the import command: its id, the hash of its
// content (see ContentHash), the raw JSON to store, and the parsed advisory.
// An importer stores JSON keyed by ID and compares Hash with the stored hash
// to count added, updated and unchanged advisories.
type Record struct {
	ID       string
	Hash     string
	JSON     []byte
	Path     string // path of the file inside the directory or zip
	Advisory Advisory
}

// FileError reports an advisory file that could not be read or parsed.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("advisory file %s: %v", e.Path, e.Err) }

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// ParseDir reads every *.json file under dir (recursively) as one OSV
// advisory. See ParseFS.
func ParseDir(dir string) ([]Record, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return ParseFS(os.DirFS(dir))
}

// ParseZip reads every *.json file of the zip archive at name as one OSV
// advisory. See ParseFS.
func ParseZip(name string) ([]Record, error) {
	r, err := zip.OpenReader(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ParseFS(r)
}

// ParseZipReader is ParseZip for an archive held by a reader.
func ParseZipReader(r io.ReaderAt, size int64) ([]Record, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	return ParseFS(zr)
}

// ParseFS reads every file ending in .json under fsys (other files and
// hidden directories such as .git are skipped) as one OSV advisory. It
// returns the records ordered by id; when two files carry the same id the
// one with the greater path wins. The first unreadable or invalid file stops
// the walk with a *FileError.
func ParseFS(fsys fs.FS) ([]Record, error) {
	byID := make(map[string]Record)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if path.Ext(p) != ".json" {
			return nil
		}
		rec, err := readRecord(fsys, p)
		if err != nil {
			return &FileError{Path: p, Err: err}
		}
		if prev, ok := byID[rec.ID]; !ok || prev.Path < rec.Path {
			byID[rec.ID] = rec
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	records := make([]Record, 0, len(byID))
	for _, r := range byID {
		records = append(records, r)
	}
	slices.SortFunc(records, func(a, b Record) int { return cmp.Compare(a.ID, b.ID) })
	return records, nil
}

// readRecord reads and parses one advisory file.
func readRecord(fsys fs.FS, p string) (Record, error) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return Record{}, err
	}
	return ParseRecord(p, data)
}

// ParseRecord parses one advisory document into a Record; p is only
// informational. Errors wrap ErrInvalidAdvisory.
func ParseRecord(p string, data []byte) (Record, error) {
	adv, err := Parse(data)
	if err != nil {
		return Record{}, err
	}
	hash, err := ContentHash(data)
	if err != nil {
		return Record{}, err
	}
	return Record{ID: adv.ID, Hash: hash, JSON: data, Path: p, Advisory: adv}, nil
}

// IndexFromJSON parses advisory documents (as stored by the importer, one
// per advisory id) and builds an Index. It fails on the first invalid
// document.
func IndexFromJSON(docs [][]byte) (*Index, error) {
	advs := make([]Advisory, 0, len(docs))
	for i, doc := range docs {
		adv, err := Parse(doc)
		if err != nil {
			return nil, fmt.Errorf("advisory document %d: %w", i, err)
		}
		advs = append(advs, adv)
	}
	return NewIndex(advs), nil
}
