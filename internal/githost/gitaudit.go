package githost

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"

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
	return fetchKindOf(head)
}

// fetchKindOf is fetchKind of the start of a client's upload-pack
// input.
func fetchKindOf(head []byte) string {
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
	return recordGitVia(ctx, q, p, repo, action, transportHTTP)
}

// The transports of git events, with the audit log's transport_protocol
// numbers.
var (
	transportHTTP = transport{"http", 1}
	transportSSH  = transport{"ssh", 2}
)

type transport struct {
	name   string
	number int
}

// recordGitVia is recordGit over a transport.
func recordGitVia(ctx context.Context, q store.Q, p *auth.Principal, repo *repos.Repository, action string, t transport) error {
	e := auditlog.Entry{OrgID: repo.Owner.ID, Action: action, Repo: repo.FullName(), Git: true,
		Data: map[string]any{"repository": repo.FullName(), "repository_public": !repo.Private,
			"transport_protocol_name": t.name, "transport_protocol": t.number}}
	if p != nil && !p.Anonymous() {
		e.Actor = &accounts.Account{ID: p.Account.ID, Login: p.Account.Login}
	}
	return auditlog.Record(ctx, q, e)
}

// fetchSniffer keeps the start of a client's upload-pack input over a
// stream as git reads it, so that the fetch is recorded once it ended
// (over a stream, git speaks first: nothing can be read ahead).
type fetchSniffer struct {
	r    io.Reader
	mu   sync.Mutex
	head []byte
}

// sniffLimit is how much of the input fetchSniffer keeps: protocol v2
// sends ls-refs before its fetch, in the same stream.
const sniffLimit = 16 * fetchPeek

func (f *fetchSniffer) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.mu.Lock()
	if keep := min(n, sniffLimit-len(f.head)); keep > 0 {
		f.head = append(f.head, p[:keep]...)
	}
	f.mu.Unlock()
	return n, err
}

// kind is fetchKindOf what was read so far.
func (f *fetchSniffer) kind() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fetchKindOf(f.head)
}
