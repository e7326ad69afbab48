package gitdata

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// blobRequest is the body of POST .../git/blobs.
type blobRequest struct {
	Content  *string `json:"content"`
	Encoding string  `json:"encoding"`
}

// shortBlobJSON is the platform's short-blob.
type shortBlobJSON struct {
	URL string `json:"url"`
	SHA string `json:"sha"`
}

// createBlob answers POST /repos/{owner}/{repo}/git/blobs: 201 with the
// blob's SHA. The content is UTF-8 text (encoding "utf-8", the default)
// or base64 (encoding "base64"), at most MaxBlobSize bytes decoded.
func (h *Handler) createBlob(w http.ResponseWriter, r *http.Request) error {
	var body blobRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Content == nil {
		return apierr.Invalid("Blob", "content", apierr.CodeMissingField)
	}
	data, err := decodeContent(*body.Content, body.Encoding)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	sha, err := gitwrite.WriteBlob(h.Repos.GitDir(repo.ID), data)
	if err != nil {
		return err
	}
	url := apiOf(r, repo) + "/git/blobs/" + sha
	httpapi.WriteCreated(w, url, shortBlobJSON{URL: url, SHA: sha})
	return nil
}

// decodeContent is a blob's content in its encoding ("utf-8" when
// empty, or "base64"), refused past MaxBlobSize.
func decodeContent(content, encoding string) ([]byte, error) {
	var data []byte
	switch strings.ToLower(encoding) {
	case "", "utf-8", "utf8":
		data = []byte(content)
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(strings.Map(dropSpace, content)); err != nil {
			return nil, apierr.Custom("Blob", "content", "content is not valid Base64")
		}
	default:
		return nil, apierr.Custom("Blob", "encoding", "encoding must be utf-8 or base64, not %s", encoding)
	}
	if len(data) > MaxBlobSize {
		return nil, apierr.Custom("Blob", "content", "content is larger than %d bytes", MaxBlobSize)
	}
	return data, nil
}

// dropSpace removes the line breaks and spaces base64 content may be
// wrapped with.
func dropSpace(r rune) rune {
	if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
		return -1
	}
	return r
}

// apiOf is the repository's API URL.
func apiOf(r *http.Request, repo *repos.Repository) string {
	return httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
}

// refused answers a *gitwrite.Refusal as the client's error (422 with the
// reason, prefixed by what the request named); other errors are the
// server's.
func refused(prefix string, err error) error {
	if refusal, ok := errors.AsType[*gitwrite.Refusal](err); ok {
		return apierr.Unprocessable("%s%s", prefix, refusal.Reason)
	}
	return err
}

// objectIs reports whether sha names an object of the type typ in g.
func objectIs(g *gitread.Repository, sha, typ string) (bool, error) {
	got, err := g.ObjectType(sha)
	if errors.Is(err, gitread.ErrPathNotFound) {
		return false, nil
	}
	return got == typ, err
}
