// Package reference serves the platform's reference tables: licenses
// (GET /licenses, /licenses/{license}), .gitignore templates
// (GET /gitignore/templates, /gitignore/templates/{name}), emojis
// (GET /emojis) and codes of conduct (GET /codes_of_conduct,
// /codes_of_conduct/{key}). The tables are not typed here: data/ holds
// copies of the repositories the platform takes them from
// (github/choosealicense.com, github/gitignore, github/gemoji,
// EthicalSource/contributor_covenant, stumpsyn/policies; data/SOURCES
// names their commits),
// made by `go run ./internal/reference/gendata`, embedded and read once.
package reference

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed data
var data embed.FS

// License is one license of choosealicense.com.
type License struct {
	Key            string
	Name           string   `yaml:"title"`
	SPDXID         string   `yaml:"spdx-id"`
	Featured       bool     `yaml:"featured"`
	Hidden         bool     `yaml:"hidden"`
	Description    string   `yaml:"description"`
	Implementation string   `yaml:"how"`
	Permissions    []string `yaml:"permissions"`
	Conditions     []string `yaml:"conditions"`
	Limitations    []string `yaml:"limitations"`
	Body           string
}

// CodeOfConduct is one of the codes of conduct the platform offers.
type CodeOfConduct struct {
	Key     string
	Name    string `yaml:"name"`
	HTMLURL string `yaml:"html_url"`
	Body    string
}

// Tables are the reference tables, read from data once.
type Tables struct {
	Licenses       []*License // by key
	Gitignore      map[string]string
	Emojis         map[string]string // alias -> image name (code points)
	CodesOfConduct []*CodeOfConduct  // by key
}

// Load reads the embedded tables; they are read once per process.
var Load = sync.OnceValues(func() (*Tables, error) {
	t := &Tables{Gitignore: map[string]string{}, Emojis: map[string]string{}}
	if err := t.loadLicenses(); err != nil {
		return nil, err
	}
	if err := t.loadGitignore(); err != nil {
		return nil, err
	}
	if err := t.loadCodesOfConduct(); err != nil {
		return nil, err
	}
	return t, t.loadEmojis()
})

func (t *Tables) loadLicenses() error {
	files, err := fs.Glob(data, "data/licenses/*.txt")
	if err != nil {
		return err
	}
	for _, f := range files {
		raw, err := data.ReadFile(f)
		if err != nil {
			return err
		}
		l, err := parseLicense(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		l.Key = strings.TrimSuffix(path.Base(f), ".txt")
		t.Licenses = append(t.Licenses, l)
	}
	slices.SortFunc(t.Licenses, func(a, b *License) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// parseLicense reads a license file: YAML front matter between "---"
// lines, then the text.
func parseLicense(raw []byte) (*License, error) {
	l := &License{Hidden: true} // choosealicense.com's default: shown only when it says so
	body, err := frontMatter(raw, l)
	l.Body = body
	return l, err
}

// frontMatter reads the YAML front matter between "---" lines at the
// start of raw into v and returns the text after it.
func frontMatter(raw []byte, v any) (string, error) {
	rest, ok := bytes.CutPrefix(raw, []byte("---\n"))
	if !ok {
		return "", fmt.Errorf("no front matter")
	}
	front, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return "", fmt.Errorf("front matter not closed")
	}
	return string(body), yaml.Unmarshal(front, v)
}

func (t *Tables) loadCodesOfConduct() error {
	files, err := fs.Glob(data, "data/codes_of_conduct/*.md")
	if err != nil {
		return err
	}
	for _, f := range files { // Glob sorts: by key
		raw, err := data.ReadFile(f)
		if err != nil {
			return err
		}
		c := &CodeOfConduct{Key: strings.TrimSuffix(path.Base(f), ".md")}
		if c.Body, err = frontMatter(raw, c); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		t.CodesOfConduct = append(t.CodesOfConduct, c)
	}
	return nil
}

// CodeOfConduct returns the code of conduct of the key (any case), or nil.
func (t *Tables) CodeOfConduct(key string) *CodeOfConduct {
	for _, c := range t.CodesOfConduct {
		if strings.EqualFold(c.Key, key) {
			return c
		}
	}
	return nil
}

func (t *Tables) loadGitignore() error {
	files, err := fs.Glob(data, "data/gitignore/*.gitignore")
	if err != nil {
		return err
	}
	for _, f := range files {
		raw, err := data.ReadFile(f)
		if err != nil {
			return err
		}
		t.Gitignore[strings.TrimSuffix(path.Base(f), ".gitignore")] = string(raw)
	}
	return nil
}

func (t *Tables) loadEmojis() error {
	raw, err := data.ReadFile("data/emojis.tsv")
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(raw)) {
		alias, image, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok {
			t.Emojis[alias] = image
		}
	}
	return nil
}

// License returns the license of the key (any case), or nil.
func (t *Tables) License(key string) *License {
	key = strings.ToLower(key)
	i, found := slices.BinarySearchFunc(t.Licenses, key, func(l *License, k string) int { return strings.Compare(l.Key, k) })
	if !found {
		return nil
	}
	return t.Licenses[i]
}

// LicenseNodeID is the platform's legacy node id of a license, which
// names it by key ("07:Licensemit").
func LicenseNodeID(key string) string {
	return base64.StdEncoding.EncodeToString([]byte("07:License" + key))
}
