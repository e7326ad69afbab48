// Package archives serves a repository's source archives as the platform
// does: GET /repos/{owner}/{repo}/tarball/{ref} and .../zipball/{ref}
// answer 302 with a download URL that forgeapi itself serves (the
// platform's codeload), under /_codeload/{owner}/{repo}/legacy.tar.gz/{sha}
// and .../legacy.zip/{sha}. The archive is git archive's of the commit,
// rooted at {owner}-{repo}-{shortsha}/, a tarball gzip-compressed; it is
// built once per commit, format and root directory into a bounded cache
// directory (Cache) and streamed from there.
//
// A public repository's download URL works for anyone; a private one's
// carries a signature of the repository, commit and format that expires
// after LinkTTL, so the URL can be handed to a client without credentials
// (as go-github's GetArchiveLink does) and leaks nothing once expired.
package archives

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"time"

	"forgeapi/internal/repos"
)

// LinkTTL is how long a private repository's download URL stays valid, as
// the platform's codeload tokens.
const LinkTTL = 5 * time.Minute

// ShortSHALength is the length of the abbreviated commit in an archive's
// name and root directory.
const ShortSHALength = 7

// Format is an archive format.
type Format int

// The archive formats.
const (
	Tarball Format = iota // a gzip-compressed tar
	Zipball               // a zip
)

// String is the format's name in the API paths: tarball, zipball.
func (f Format) String() string {
	if f == Zipball {
		return "zipball"
	}
	return "tarball"
}

// ext is the file name extension of an archive of the format.
func (f Format) ext() string {
	if f == Zipball {
		return ".zip"
	}
	return ".tar.gz"
}

// gitFormat is git archive's --format.
func (f Format) gitFormat() string {
	if f == Zipball {
		return "zip"
	}
	return "tar"
}

// contentType is the media type the download is served as (codeload's).
func (f Format) contentType() string {
	if f == Zipball {
		return "application/zip"
	}
	return "application/x-gzip"
}

// segment is the download path's segment naming the format.
func (f Format) segment() string { return "legacy" + f.ext() }

// formatOfSegment is the format a download path's segment names.
func formatOfSegment(s string) (Format, bool) {
	switch s {
	case Tarball.segment():
		return Tarball, true
	case Zipball.segment():
		return Zipball, true
	}
	return 0, false
}

// Name is the archive's base name without extension, and its root
// directory: {owner}-{repo}-{shortsha}, as the platform names them.
func Name(repo *repos.Repository, sha string) string {
	return repo.Owner.Login + "-" + repo.Name + "-" + sha[:min(len(sha), ShortSHALength)]
}

// Signer signs and checks download URLs.
type Signer struct {
	// Key is the HMAC-SHA256 key.
	Key []byte
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// NewSigner returns a Signer whose key is derived from the server's
// secret key, so it differs from the key of every other use of that
// secret.
func NewSigner(serverKey []byte, now func() time.Time) *Signer {
	mac := hmac.New(sha256.New, serverKey)
	mac.Write([]byte("forgeapi archive download links"))
	return &Signer{Key: mac.Sum(nil), Now: now}
}

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// sign is the signature of a download of the repository's commit in the
// format until expires (Unix seconds).
func (s *Signer) sign(repoID int64, sha string, f Format, expires int64) string {
	mac := hmac.New(sha256.New, s.Key)
	mac.Write([]byte(strconv.FormatInt(repoID, 10) + "\x00" + sha + "\x00" + f.String() + "\x00" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// Query is the query string of a signed download URL valid for LinkTTL.
func (s *Signer) Query(repoID int64, sha string, f Format) string {
	expires := s.now().Add(LinkTTL).Unix()
	return url.Values{"expires": {strconv.FormatInt(expires, 10)}, "token": {s.sign(repoID, sha, f, expires)}}.Encode()
}

// Valid reports whether q holds a signature of the download that has not
// expired. Signatures are compared in constant time.
func (s *Signer) Valid(q url.Values, repoID int64, sha string, f Format) bool {
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || s.now().Unix() > expires {
		return false
	}
	want := s.sign(repoID, sha, f, expires)
	return hmac.Equal([]byte(q.Get("token")), []byte(want))
}
