package githost

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// fetchPeek is how much of an upload-pack request body fetchKind reads
// ahead: enough for the wants and the first haves of a request.
const fetchPeek = 4096

// fetchKind reads ahead in a git-upload-pack request and returns the
// audit log action it is: git.clone for a request that wants objects and
// has none, git.fetch for one that has some (or is gzip-compressed,
// which git does only for long lists of haves), "" for one that fetches
// nothing (protocol v2 ls-refs). The body is left whole for git.
func fetchKind(r *http.Request) string {
	if r.Header.Get("Content-Encoding") == "gzip" {
		return "git.fetch"
	}
	br := bufio.NewReaderSize(r.Body, fetchPeek)
	head, _ := br.Peek(fetchPeek)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	switch {
	case !bytes.Contains(head, []byte("want ")):
		return ""
	case bytes.Contains(head, []byte("have ")):
		return "git.fetch"
	}
	return "git.clone"
}

// recordFetch records a clone or fetch of an organization's repository
// in its audit log (one insert, include=git); other requests and other
// owners' repositories record nothing.
func (h *Handler) recordFetch(ctx context.Context, r *http.Request, p *auth.Principal, repo *repos.Repository) error {
	if !repo.Owner.IsOrg() {
		return nil
	}
	action := fetchKind(r)
	if action == "" {
		return nil
	}
	return recordGit(ctx, h.DB, p, repo, action)
}

// recordGit writes a git event of the repository to its organization's
// audit log, with the principal (nil or anonymous: no actor) as actor.
func recordGit(ctx context.Context, q store.Q, p *auth.Principal, repo *repos.Repository, action string) error {
	e := auditlog.Entry{OrgID: repo.Owner.ID, Action: action, Repo: repo.FullName(), Git: true,
		Data: map[string]any{"repository": repo.FullName(), "repository_public": !repo.Private,
			"transport_protocol_name": "http", "transport_protocol": 1}}
	if p != nil && !p.Anonymous() {
		e.Actor = &accounts.Account{ID: p.Account.ID, Login: p.Account.Login}
	}
	return auditlog.Record(ctx, q, e)
}
