package releases

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxNotesCommits is how many commits of a range generated notes look
// for merged pull requests in.
const MaxNotesCommits = 1000

// NotesRequest names what notes are generated for: the release's tag,
// the commit-ish the tag will be made from when it does not exist yet
// (default: the default branch), and the previous tag (default: the tag
// of the newest published release whose commit is an ancestor of this
// one's).
type NotesRequest struct {
	TagName  string
	Target   string
	Previous string
}

// Notes are generated release notes: the platform's name and body.
type Notes struct {
	Name string `json:"name"`
	Body string `json:"body"`
}

// GenerateNotes writes the notes of a release as the platform does: a
// "## What's Changed" list of the pull requests merged between the
// previous tag and this one ("* TITLE by @LOGIN in URL"), then
// "**Full Changelog**: " and the comparison's URL (the tag's commits
// when there is no previous tag). A target or previous tag that names no
// commit is a 422; base is the API's base URL.
func (s *Service) GenerateNotes(ctx context.Context, base string, repo *repos.Repository, req NotesRequest) (*Notes, error) {
	g, err := gitread.Open(s.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	head, err := g.Resolve("refs/tags/" + req.TagName)
	if err != nil {
		target := req.Target
		if target == "" {
			target = repo.DefaultBranch
		}
		if head, err = g.Resolve(target); err != nil {
			return nil, apierr.Custom("Release", "target_commitish", "Target commitish %s is invalid", target)
		}
	}
	previous := req.Previous
	var prevSHA string
	if previous != "" {
		if prevSHA, err = g.Resolve("refs/tags/" + previous); err != nil {
			return nil, apierr.Custom("Release", "previous_tag_name", "Previous tag name %s is invalid", previous)
		}
	} else if previous, prevSHA, err = s.previousTag(ctx, g, repo, req.TagName, head); err != nil {
		return nil, err
	}
	list, err := g.CommitsBetween(ctx, prevSHA, head, MaxNotesCommits)
	if err != nil {
		return nil, err
	}
	shas := make([]string, 0, len(list.Commits))
	for _, c := range list.Commits {
		shas = append(shas, c.SHA)
	}
	pulls, err := mergedPulls(ctx, s.DB, repo.ID, shas)
	if err != nil {
		return nil, err
	}
	web := httpapi.WebBase(base) + "/" + repo.FullName()
	var b strings.Builder
	if len(pulls) > 0 {
		b.WriteString("## What's Changed\n")
		for _, p := range pulls {
			b.WriteString("* " + p.title + " by @" + p.login + " in " + web + "/pull/" + itoa(int(p.number)) + "\n")
		}
		b.WriteString("\n")
	}
	if previous != "" {
		b.WriteString("\n**Full Changelog**: " + web + "/compare/" + previous + "..." + req.TagName)
	} else {
		b.WriteString("\n**Full Changelog**: " + web + "/commits/" + req.TagName)
	}
	return &Notes{Name: req.TagName, Body: strings.TrimPrefix(b.String(), "\n")}, nil
}

// previousTag finds the tag of the newest published release, other than
// tag, whose commit is an ancestor of head: "" when none is.
func (s *Service) previousTag(ctx context.Context, g *gitread.Repository, repo *repos.Repository, tag, head string) (string, string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT tag_name FROM releases WHERE repository_id = $1 AND draft = FALSE AND tag_name <> $2
		ORDER BY created_at DESC, id DESC LIMIT 100`, repo.ID, tag)
	if err != nil {
		return "", "", store.Normalize(err)
	}
	var tags []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return "", "", store.Normalize(err)
		}
		tags = append(tags, t)
	}
	rows.Close()
	for _, t := range tags {
		sha, err := g.Resolve("refs/tags/" + t)
		if errors.Is(err, gitread.ErrRevisionNotFound) {
			continue
		} else if err != nil {
			return "", "", err
		}
		if sha == head {
			continue
		}
		if ok, err := g.IsAncestor(ctx, sha, head); err != nil {
			return "", "", err
		} else if ok {
			return t, sha, nil
		}
	}
	return "", "", nil
}

type mergedPull struct {
	number int64
	title  string
	login  string
}

// mergedPulls returns the repository's merged pull requests whose merge
// commit is one of shas, oldest merge first.
func mergedPulls(ctx context.Context, q store.Q, repoID int64, shas []string) ([]mergedPull, error) {
	if len(shas) == 0 {
		return nil, nil
	}
	args := []any{repoID}
	marks := make([]string, len(shas))
	for i, sha := range shas {
		args = append(args, sha)
		marks[i] = "$" + itoa(i+2)
	}
	rows, err := q.QueryContext(ctx, `SELECT p.number, i.title, COALESCE(a.login, 'ghost') FROM pull_requests p
		JOIN issues i ON i.id = p.issue_id LEFT JOIN accounts a ON a.id = i.user_id
		WHERE p.repository_id = $1 AND p.merged_at IS NOT NULL AND p.merge_commit_sha IN (`+strings.Join(marks, ", ")+`)
		ORDER BY p.merged_at, p.number`, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []mergedPull
	for rows.Next() {
		var p mergedPull
		if err := rows.Scan(&p.number, &p.title, &p.login); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, p)
	}
	return out, store.Normalize(rows.Err())
}
