package githost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// recordRefs notes in recorded_refs, in the transaction that records a
// push, the new value of each reference the push moved (the zero SHA for
// a deletion) that git's reference still has (g reads the repository).
// Pushes are recorded in any order (the Recoverer records a push cut
// short after the pushes that followed it; two pushes' recordings race),
// but the last push that moved a reference before a moment either is
// recorded after that moment (it is in push_log then) or, recorded
// before it, found git at its value: so the row, with push_log, tells
// the reference's value at any commit of the database.
func recordRefs(ctx context.Context, tx store.Q, g *gitread.Repository, repoID int64, updates []githttp.RefUpdate) error {
	for _, u := range updates {
		sha, exists, err := g.RefTarget(u.Ref)
		if err != nil {
			return err
		}
		if !exists {
			sha = zeroSHA
		}
		if sha != u.NewSHA {
			continue // moved on since: a later push's recording writes it
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO recorded_refs (repository_id, ref, sha) VALUES ($1, $2, $3)
			ON CONFLICT (repository_id, ref) DO UPDATE SET sha = excluded.sha`, repoID, u.Ref, u.NewSHA)
		if err != nil {
			return fmt.Errorf("record reference %s: %w", u.Ref, store.Normalize(err))
		}
	}
	return nil
}

// isPushKey reports whether a reflog entry's committer email is a push's
// key (newPushKey): an update made by a push or a server push, which
// logged it in push_log first.
func isPushKey(email string) bool {
	return strings.HasPrefix(email, "push-") && strings.HasSuffix(email, "@forgeapi")
}

// RefRestorer brings the references of repositories copied after a
// snapshot of the database back to what that snapshot knows (forgeapi
// restore). Every update of a push is logged in push_log before it moves
// a reference and, once its events are recorded, noted in recorded_refs;
// git writes it to the reference's reflog with the push's key. So, in a
// copy of a repository made after the snapshot, a reference's reflog
// entries are undone from the newest while the value is neither the one
// recorded_refs holds nor one a push still in push_log set (the push
// recovery worker records those pushes once the server starts), and the
// entry undone was written by a push the snapshot does not know (a push
// key of no push_log row) after recorded_refs started. A reference
// deleted after the snapshot comes back with the recorded value. What the
// rows cannot tell (an entry of another writer, an older one) is left as
// it is.
type RefRestorer struct {
	q store.Q
	// since is when recorded_refs started: entries older than it were
	// written by pushes that have no row.
	since time.Time
}

// RefChange is a reference that RefRestorer moved: its value in the copy
// and the value it was given (the zero SHA for none).
type RefChange struct {
	Ref, From, To string
}

// NewRefRestorer returns a RefRestorer reading the database q.
func NewRefRestorer(ctx context.Context, q store.Q) (*RefRestorer, error) {
	var since time.Time
	if err := q.QueryRowContext(ctx, `SELECT since FROM recorded_refs_since`).Scan(&since); err != nil {
		return nil, fmt.Errorf("read recorded_refs_since: %w", store.Normalize(err))
	}
	return &RefRestorer{q: q, since: since}, nil
}

// knownRefs is what the database knows of a repository's references.
type knownRefs struct {
	recorded map[string]string // reference -> value its last recorded push left
	// pendingKeys are the keys of the repository's pushes in push_log;
	// pendingValues the values their updates give each reference.
	pendingKeys   map[string]bool
	pendingValues map[string]map[string]bool
}

// Restore sets back the references of the repository repoID, whose bare
// copy is dir, and returns the references it moved. It fails when a value
// to restore is not in the copy (the database is newer than the copy).
func (r *RefRestorer) Restore(ctx context.Context, repoID int64, dir string) ([]RefChange, error) {
	known, err := r.known(ctx, repoID)
	if err != nil {
		return nil, err
	}
	g, err := gitread.Open(dir)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	refs, err := g.Refs("refs/")
	if err != nil {
		return nil, err
	}
	current := make(map[string]string, len(refs))
	for _, ref := range refs {
		current[ref.Name] = ref.SHA
	}
	names := slices.Collect(maps.Keys(current))
	for name := range known.recorded {
		if _, ok := current[name]; !ok {
			names = append(names, name) // deleted after the snapshot
		}
	}
	slices.Sort(names)
	var changes []RefChange
	logs := map[string][]gitread.RefLogEntry{}
	for _, name := range names {
		cur, ok := current[name]
		if !ok {
			cur = zeroSHA
		}
		full, err := g.RefLog(name)
		if errors.Is(err, gitread.ErrInvalidRefName) {
			full, err = nil, nil // a name go-git does not read a reflog of: as if it had none
		}
		if err != nil {
			return nil, err
		}
		log := loggedUpTo(full, cur)
		to, kept := r.settle(name, cur, log, known)
		if to != cur {
			changes = append(changes, RefChange{Ref: name, From: cur, To: to})
		}
		if to != zeroSHA && (to != cur || len(kept) != len(full)) {
			logs[name] = kept
		}
	}
	if err := moveRefs(ctx, dir, changes); err != nil {
		return nil, err
	}
	for name, kept := range logs {
		if err := writeRefLog(dir, name, kept); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// known reads what the database knows of the repository's references.
func (r *RefRestorer) known(ctx context.Context, repoID int64) (*knownRefs, error) {
	k := &knownRefs{recorded: map[string]string{}, pendingKeys: map[string]bool{}, pendingValues: map[string]map[string]bool{}}
	rows, err := r.q.QueryContext(ctx, `SELECT ref, sha FROM recorded_refs WHERE repository_id = $1`, repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	for rows.Next() {
		var ref, sha string
		if err := rows.Scan(&ref, &sha); err != nil {
			rows.Close()
			return nil, err
		}
		k.recorded[ref] = sha
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = r.q.QueryContext(ctx, `SELECT id, push_key, updates FROM push_log WHERE repository_id = $1`, repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var key, raw string
		if err := rows.Scan(&id, &key, &raw); err != nil {
			return nil, err
		}
		updates, err := parseLogUpdates(raw)
		if err != nil {
			return nil, fmt.Errorf("push log entry %d: updates: %w", id, err)
		}
		if key != "" {
			k.pendingKeys[key] = true
		}
		for _, u := range updates {
			if k.pendingValues[u.Ref] == nil {
				k.pendingValues[u.Ref] = map[string]bool{}
			}
			k.pendingValues[u.Ref][u.New] = true
		}
	}
	return k, rows.Err()
}

// settle returns the value the reference name (cur in the copy, with the
// reflog log) gets back and the reflog entries it keeps.
func (r *RefRestorer) settle(name, cur string, log []gitread.RefLogEntry, k *knownRefs) (string, []gitread.RefLogEntry) {
	recorded, hasRecord := k.recorded[name]
	for {
		if (hasRecord && cur == recorded) || k.pendingValues[name][cur] {
			return cur, log // the snapshot knows this value
		}
		if len(log) == 0 {
			if hasRecord {
				return recorded, nil // deleted or made again after the snapshot
			}
			return cur, nil
		}
		last := log[len(log)-1]
		if !isPushKey(last.Email) || k.pendingKeys[last.Email] || !last.Time.After(r.since) {
			return cur, log // not a push the snapshot missed
		}
		cur, log = last.Old, log[:len(log)-1]
	}
}

// loggedUpTo drops the reflog entries written after the reference's value
// cur was read (a backup copies a reference before its reflog): those
// after the last entry that set cur. A reflog with no such entry belongs
// to a later life of the reference (deleted and made again in between)
// and is dropped whole, as is the reflog of a reference that does not
// exist (cur the zero SHA).
func loggedUpTo(log []gitread.RefLogEntry, cur string) []gitread.RefLogEntry {
	if cur == zeroSHA {
		return nil
	}
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].New == cur {
			return log[:i+1]
		}
	}
	return nil
}

// moveRefs applies the changes in one `git update-ref` transaction.
func moveRefs(ctx context.Context, dir string, changes []RefChange) error {
	if len(changes) == 0 {
		return nil
	}
	var in strings.Builder
	for _, c := range changes {
		switch {
		case c.To == zeroSHA:
			fmt.Fprintf(&in, "delete %s %s\n", c.Ref, c.From)
		case c.From == zeroSHA:
			fmt.Fprintf(&in, "create %s %s\n", c.Ref, c.To)
		default:
			fmt.Fprintf(&in, "update %s %s %s\n", c.Ref, c.To, c.From)
		}
	}
	git := gitcmd.In(dir).With("GIT_COMMITTER_NAME=forgeapi restore", "GIT_COMMITTER_EMAIL=restore@forgeapi")
	_, err := git.Output(ctx, strings.NewReader(in.String()), "update-ref", "--stdin")
	if gitErr, ok := errors.AsType[*gitcmd.Error](err); ok && strings.Contains(gitErr.Stderr, "nonexistent object") {
		return fmt.Errorf("the repository copy %s lacks a commit the database recorded (%s): the database was copied after the repositories", dir, gitErr.Stderr)
	}
	if err != nil {
		return fmt.Errorf("in %s: %w", dir, err)
	}
	return nil
}

// writeRefLog replaces the reflog of the reference name with the entries
// (removes it when there are none).
func writeRefLog(dir, name string, entries []gitread.RefLogEntry) error {
	path := filepath.Join(dir, "logs", filepath.FromSlash(name))
	if len(entries) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".restore"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
