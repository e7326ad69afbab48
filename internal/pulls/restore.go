package pulls

import (
	"context"
	"strconv"
	"strings"

	"forgeapi/internal/store"
)

// RestoreRefs makes the refs/pull/ references of a restored repository
// (forgeapi restore: a repository copied after the database's snapshot)
// agree with the pull requests of that snapshot: refs/pull/{n}/head at
// the head commit the pull request records (a merge checks it), the test
// merge refs/pull/{n}/merge of an unmerged one at its merge_commit_sha
// (none when that is empty), and the references of pull requests the
// database does not have removed. It returns how many references it
// changed.
func RestoreRefs(ctx context.Context, q store.Q, repoID int64, dir string) (int, error) {
	type want struct {
		head, merge string
		merged      bool
	}
	wanted := map[int64]want{}
	rows, err := q.QueryContext(ctx, `SELECT number, head_sha, merge_commit_sha, merged_at IS NOT NULL FROM pull_requests
		WHERE repository_id = $1`, repoID)
	if err != nil {
		return 0, store.Normalize(err)
	}
	for rows.Next() {
		var n int64
		var w want
		if err := rows.Scan(&n, &w.head, &w.merge, &w.merged); err != nil {
			rows.Close()
			return 0, err
		}
		wanted[n] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	git := gitDir(dir)
	out, err := git.run(ctx, nil, "", "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull/")
	if err != nil {
		return 0, err
	}
	have := map[string]string{}
	for line := range strings.Lines(out) {
		if name, sha, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			have[name] = sha
		}
	}
	changed := 0
	set := func(ref, sha string) error {
		if have[ref] == sha {
			return nil
		}
		changed++
		if sha == "" {
			return git.deleteRef(ctx, ref)
		}
		return git.setRef(ctx, ref, sha)
	}
	for ref := range have {
		if n, ok := refNumber(ref); !ok || wanted[n] == (want{}) {
			if err := set(ref, ""); err != nil {
				return changed, err
			}
		}
	}
	for n, w := range wanted {
		if err := set(pullRef(n, "head"), w.head); err != nil {
			return changed, err
		}
		if !w.merged {
			if err := set(pullRef(n, "merge"), w.merge); err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// refNumber is the n of refs/pull/{n}/...
func refNumber(ref string) (int64, bool) {
	rest, _ := strings.CutPrefix(ref, "refs/pull/")
	num, _, ok := strings.Cut(rest, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	return n, ok && err == nil
}
