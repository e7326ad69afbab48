package advisory

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

const testDB = "../testdata/advisories"

func loadIndex(t *testing.T) *Index {
	t.Helper()
	records, err := ParseDir(testDB)
	if err != nil {
		t.Fatal(err)
	}
	advs := make([]Advisory, len(records))
	for i, r := range records {
		advs[i] = r.Advisory
	}
	return NewIndex(advs)
}

func TestMatch(t *testing.T) {
	t.Parallel()
	idx := loadIndex(t)
	tests := []struct {
		eco, name, version string
		want               []string // GHSA ids
	}{
		// introduced "0" / fixed boundary
		{"npm", "lodash", "0.0.1", []string{"GHSA-35jh-r3h4-6jhm"}},
		{"npm", "lodash", "4.17.20", []string{"GHSA-35jh-r3h4-6jhm"}},
		{"npm", "lodash", "4.17.21", nil},
		{"npm", "lodash", "^4.17.0", nil}, // a requirement range is not a version
		{"npm", "Lodash", "4.17.20", nil}, // npm names are case-sensitive
		// semver pre-releases
		{"npm", "@acme/widget", "2.0.0-alpha.1", []string{"GHSA-pre1-rel2-test"}},
		{"npm", "@acme/widget", "2.0.0-beta.3", []string{"GHSA-pre1-rel2-test"}},
		{"npm", "@acme/widget", "2.0.0-rc.2", nil},
		{"npm", "@acme/widget", "2.0.0", nil},
		{"npm", "@acme/widget", "1.9.9", nil},
		// PyPI ordering, normalised names, explicit versions, alias GHSA id
		{"pip", "Django", "4.2.7", []string{"GHSA-d1an-g0sq-l111"}},
		{"pip", "django", "4.2.2", []string{"GHSA-d1an-g0sq-l111"}},
		{"pip", "django", "4.2.8", nil},
		{"pip", "django", "4.2.10", nil}, // 4.2.10 > 4.2.8 in PEP 440, not as strings
		{"pip", "django", "5.0b1", []string{"GHSA-d1an-g0sq-l111"}},
		{"pip", "django", "5.0rc1", nil},
		{"pip", "django", "4.1.9", nil},
		// last_affected is inclusive
		{"pip", "Flask_Cors", "4.0.0", []string{"GHSA-flsk-cors-0001"}},
		{"pip", "flask.cors", "3.0.10", []string{"GHSA-flsk-cors-0001"}},
		{"pip", "flask-cors", "4.0.1", nil},
		// Go: v-prefixed module versions against SEMVER ranges; GIT ranges ignored
		{"gomod", "github.com/gorilla/mux", "v1.8.1", []string{"GHSA-g0mx-path-0002"}},
		{"gomod", "github.com/gorilla/mux", "v1.8.2", nil},
		{"gomod", "github.com/gorilla/mux", "v1.7.4", nil},
		// crates: two ranges in one
		{"cargo", "regex", "1.5.4", []string{"GHSA-rgx0-dos0-0003"}},
		{"cargo", "regex", "1.6.0", nil},
		{"cargo", "regex", "1.10.2", []string{"GHSA-rgx0-dos0-0003"}},
		{"cargo", "regex", "1.10.3", nil},
		// withdrawn advisories never match
		{"cargo", "serde", "1.0.0", nil},
		// unknown package or ecosystem
		{"rubygems", "lodash", "1.0.0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.eco+"/"+tt.name+"@"+tt.version, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range idx.Match(tt.eco, tt.name, tt.version) {
				got = append(got, v.AdvisoryGHSAID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVulnerabilityFields(t *testing.T) {
	t.Parallel()
	idx := loadIndex(t)
	tests := []struct {
		eco, name, version string
		want               Vulnerability
	}{
		{"npm", "lodash", "4.17.0", Vulnerability{"high", "GHSA-35jh-r3h4-6jhm", "Command Injection in lodash", "https://github.com/advisories/GHSA-35jh-r3h4-6jhm"}},
		{"pip", "django", "4.2.7", Vulnerability{"critical", "GHSA-d1an-g0sq-l111", "Django SQL injection", "https://github.com/advisories/GHSA-d1an-g0sq-l111"}},
		{"pip", "flask-cors", "4.0.0", Vulnerability{"moderate", "GHSA-flsk-cors-0001", "Flask-CORS log injection", "https://github.com/advisories/GHSA-flsk-cors-0001"}},
		{"npm", "@acme/widget", "2.0.0-beta.1", Vulnerability{"moderate", "GHSA-pre1-rel2-test", "Prototype pollution in @acme/widget pre-releases", "https://github.com/advisories/GHSA-pre1-rel2-test"}},
		{"gomod", "github.com/gorilla/mux", "v1.8.0", Vulnerability{"low", "GHSA-g0mx-path-0002", "Path traversal in gorilla/mux", "https://github.com/advisories/GHSA-g0mx-path-0002"}},
	}
	for _, tt := range tests {
		got := idx.Match(tt.eco, tt.name, tt.version)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s/%s@%s: got %+v, want %+v", tt.eco, tt.name, tt.version, got, tt.want)
		}
	}
}

func TestMatchOrdersBySeverityAndDeduplicates(t *testing.T) {
	t.Parallel()
	mk := func(id, sev string) Advisory {
		return Advisory{ID: id, Severity: sev, Affected: []Affected{
			{OSVEcosystem: "npm", Ecosystem: "npm", Name: "a", Versions: []string{"1.0.0"}},
			{OSVEcosystem: "npm", Ecosystem: "npm", Name: "a", Ranges: []Range{{Type: "SEMVER", Events: []Event{{Introduced: "0"}}}}},
		}}
	}
	idx := NewIndex([]Advisory{mk("GHSA-aaaa", "low"), mk("GHSA-bbbb", "critical"), mk("GHSA-cccc", "")})
	var got []string
	for _, v := range idx.Match("npm", "a", "1.0.0") {
		got = append(got, v.AdvisoryGHSAID)
	}
	want := []string{"GHSA-bbbb", "GHSA-aaaa", "GHSA-cccc"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	var nilIdx *Index
	if nilIdx.Match("npm", "a", "1.0.0") != nil {
		t.Error("nil index matched")
	}
}

func TestParseDir(t *testing.T) {
	t.Parallel()
	records, err := ParseDir(testDB)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range records {
		ids = append(ids, r.ID)
		if len(r.Hash) != 64 || len(r.JSON) == 0 || r.Path == "" {
			t.Errorf("%s: incomplete record %+v", r.ID, r)
		}
	}
	want := []string{"GHSA-35jh-r3h4-6jhm", "GHSA-flsk-cors-0001", "GHSA-pre1-rel2-test", "GHSA-wdrn-with-drawn", "GO-2023-0002", "PYSEC-2023-0001", "RUSTSEC-2023-0003"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if _, err := ParseDir(filepath.Join(testDB, "npm", "GHSA-35jh-r3h4-6jhm.json")); err == nil {
		t.Error("ParseDir of a file: no error")
	}
}

func TestParseZipMatchesDirAndHashIgnoresFormatting(t *testing.T) {
	t.Parallel()
	dirRecords, err := ParseDir(testDB)
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "db.zip")
	writeZip(t, zipPath, os.DirFS(testDB), true)
	zipRecords, err := ParseZip(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(zipRecords) != len(dirRecords) {
		t.Fatalf("zip has %d records, dir %d", len(zipRecords), len(dirRecords))
	}
	for i := range dirRecords {
		if zipRecords[i].ID != dirRecords[i].ID || zipRecords[i].Hash != dirRecords[i].Hash {
			t.Errorf("record %d: zip %s/%s, dir %s/%s", i, zipRecords[i].ID, zipRecords[i].Hash, dirRecords[i].ID, dirRecords[i].Hash)
		}
	}
	data, _ := os.ReadFile(zipPath)
	if rs, err := ParseZipReader(bytes.NewReader(data), int64(len(data))); err != nil || len(rs) != len(dirRecords) {
		t.Errorf("ParseZipReader: %d records, err %v", len(rs), err)
	}
}

// writeZip copies the *.json files of fsys into a zip; with reindent each
// document is re-indented so that its bytes (not its content) change.
func writeZip(t *testing.T, name string, fsys fs.FS, reindent bool) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if reindent {
			var out bytes.Buffer
			if err := json.Indent(&out, data, "", "\t"); err != nil {
				return err
			}
			data = out.Bytes()
		}
		w, err := zw.Create("advisories/" + p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{`, `{"summary": "no id"}`, `[]`, `{"id": 5}`} {
		if _, err := Parse([]byte(doc)); !errors.Is(err, ErrInvalidAdvisory) {
			t.Errorf("Parse(%s) err = %v", doc, err)
		}
	}
	fsys := fstest.MapFS{
		"a/GHSA-good.json": {Data: []byte(`{"id": "GHSA-good"}`)},
		"b/bad.json":       {Data: []byte(`{"id": `)},
	}
	_, err := ParseFS(fsys)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != "b/bad.json" || !errors.Is(err, ErrInvalidAdvisory) {
		t.Errorf("ParseFS err = %v, want *FileError for b/bad.json", err)
	}
	if _, err := ParseZip(filepath.Join(t.TempDir(), "missing.zip")); err == nil {
		t.Error("ParseZip of a missing file: no error")
	}
}

func TestParseFSDuplicateIDsAndHiddenDirs(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"a/GHSA-x.json":    {Data: []byte(`{"id": "GHSA-x", "summary": "old"}`)},
		"b/GHSA-x.json":    {Data: []byte(`{"id": "GHSA-x", "summary": "new"}`)},
		".git/junk.json":   {Data: []byte(`not json`)},
		"notes/readme.txt": {Data: []byte(`text`)},
	}
	records, err := ParseFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].Advisory.Summary != "new" {
		t.Errorf("records = %+v", records)
	}
}

func TestIndexFromJSON(t *testing.T) {
	t.Parallel()
	idx, err := IndexFromJSON([][]byte{
		[]byte(`{"id":"GHSA-1","summary":"s","affected":[{"package":{"ecosystem":"RubyGems","name":"rack"},"versions":["2.2.8"]}],"database_specific":{"severity":"LOW"}}`),
		[]byte(`{"id":"GHSA-2","affected":[{"package":{"ecosystem":"Maven","name":"junit:junit"},"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"4.0"},{"fixed":"4.13.1"}]}]}]}`),
		[]byte(`{"id":"GHSA-3","affected":[{"package":{"ecosystem":"Packagist","name":"Monolog/Monolog"},"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"3.0.0"},{"fixed":"3.5.1"}]}]}]}`),
		[]byte(`{"id":"GHSA-4","affected":[{"package":{"ecosystem":"GitHub Actions","name":"actions/checkout"},"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"4.1.0"}]}]}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		eco, name, version string
		want               int
	}{
		{"rubygems", "rack", "2.2.8", 1},
		{"rubygems", "rack", "2.2.9", 0},
		{"maven", "junit:junit", "4.13", 1},
		{"maven", "junit:junit", "4.13.2", 0},
		{"maven", "junit:junit", "4.13-beta-1", 1},
		{"composer", "monolog/monolog", "3.5.0", 1},
		{"actions", "actions/checkout", "v4", 1},
		{"actions", "actions/checkout", "v4.1.1", 0},
	}
	for _, c := range checks {
		if got := len(idx.Match(c.eco, c.name, c.version)); got != c.want {
			t.Errorf("%s/%s@%s: %d matches, want %d", c.eco, c.name, c.version, got, c.want)
		}
	}
	if idx.Len() != 4 {
		t.Errorf("Len = %d", idx.Len())
	}
	if _, err := IndexFromJSON([][]byte{[]byte(`x`)}); !errors.Is(err, ErrInvalidAdvisory) {
		t.Errorf("invalid document: err = %v", err)
	}
}
