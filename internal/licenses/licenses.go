// Package licenses detects a repository's license from its files, as the
// platform does: the license file at the root of the default branch
// (LICENSE, LICENSE.md, COPYING, UNLICENSE, ...) is matched against the
// known license texts with github.com/google/licensecheck, and the match
// is named by the platform's license list (package reference, the keys of
// GET /licenses). A license file that matches no known license, or
// several, is the platform's "other" license.
//
// Detection runs when a push moves the default branch (PushSink, in the
// push's transaction) and its result is kept per repository
// (repository_licenses): the repository object shows it without reading
// git. GET /repos/{owner}/{repo}/license serves the file itself, with the
// license-content shape, detected at the ref it is asked for.
package licenses

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/google/licensecheck"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/reference"
)

// OtherKey is the key of a license file that matches no license of the
// platform's list (spdx_id NOASSERTION).
const OtherKey = "other"

// MinCoverage is the share of a license file's words, in percent, that
// must match one known license for the file to be that license; below,
// the file is an "other" license. The rest allows copyright lines,
// headings and a short preamble around a standard text.
const MinCoverage = 75

// MaxFileSize is the largest license file read; a larger one is "other".
const MaxFileSize = 256 << 10

// fileNames are the root files that hold a license, most preferred first
// (compared case-insensitively), as the platform's detection (licensee)
// ranks them: LICENSE before COPYING, no extension or .md/.txt first.
var fileNames = []string{"license", "license.md", "license.txt", "license.markdown", "license.rst",
	"licence", "licence.md", "licence.txt", "copying", "copying.md", "copying.txt", "unlicense",
	"unlicense.md", "unlicense.txt", "license-mit", "license.mit", "mit-license", "mit-license.md"}

// Detected is the license of a commit's files.
type Detected struct {
	// Key is the platform's key (reference.License.Key), or OtherKey.
	Key string
	// File is the license file.
	File gitread.Entry
}

// Detect finds the license file at the root of the commit rev and the
// license it holds. It returns nil when the root has no license file, and
// gitread's errors for a revision it cannot read.
func Detect(g *gitread.Repository, rev string) (*Detected, error) {
	entries, err := g.ListDir(rev, "")
	if err != nil {
		return nil, err
	}
	file, ok := licenseFile(entries)
	if !ok {
		return nil, nil
	}
	d := &Detected{Key: OtherKey, File: file}
	if file.Size > MaxFileSize {
		return d, nil
	}
	text, err := g.ReadBlob(file.SHA)
	if err != nil {
		return nil, err
	}
	d.Key = Identify(text)
	return d, nil
}

// licenseFile picks the most preferred license file of the root entries.
func licenseFile(entries []gitread.Entry) (gitread.Entry, bool) {
	best, rank := gitread.Entry{}, len(fileNames)
	for _, e := range entries {
		if e.Type != gitread.EntryFile {
			continue
		}
		if i := slices.Index(fileNames, strings.ToLower(e.Name)); i >= 0 && i < rank {
			best, rank = e, i
		}
	}
	return best, rank < len(fileNames)
}

// Identify names the license of a license file's text: the key of the one
// license of the platform's list that licensecheck finds covering at
// least MinCoverage percent of it, else OtherKey.
func Identify(text []byte) string {
	sc, err := scanner()
	if err != nil {
		return OtherKey
	}
	cov := sc.Scan(text)
	if cov.Percent < MinCoverage {
		return OtherKey
	}
	id := ""
	for _, m := range cov.Match {
		if m.IsURL {
			continue
		}
		if id != "" && m.ID != id {
			return OtherKey // several licenses: the platform's "other"
		}
		id = m.ID
	}
	if l := bySPDX(id); l != nil {
		return l.Key
	}
	return OtherKey
}

// scanner is licensecheck's scanner of the licenses of the platform's
// list alone (85 texts of licensecheck's 551): built on first use, in
// about a second where the whole set takes several.
var scanner = sync.OnceValues(func() (*licensecheck.Scanner, error) {
	t, err := reference.Load()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, l := range t.Licenses {
		ids[strings.ToLower(l.SPDXID)] = true
	}
	var known []licensecheck.License
	for _, l := range licensecheck.BuiltinLicenses() {
		if ids[strings.ToLower(l.ID)] {
			known = append(known, l)
		}
	}
	return licensecheck.NewScanner(known)
})

// bySPDX is the license of the platform's list with the SPDX id, or nil.
func bySPDX(id string) *reference.License {
	if id == "" {
		return nil
	}
	t, err := reference.Load()
	if err != nil {
		return nil
	}
	for _, l := range t.Licenses {
		if strings.EqualFold(l.SPDXID, id) {
			return l
		}
	}
	return nil
}

// errNoLicense is a repository without a license file at the ref.
var errNoLicense = errors.New("no license file")
