package issues

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// DefaultColor is the color of a label created by naming it on an issue.
const DefaultColor = "ededed"

var colorPattern = regexp.MustCompile(`^[0-9a-fA-F]{6}$`)

// NormalizeColor is a color without its leading #, in lower case; ok is
// false when it is not six hex digits.
func NormalizeColor(c string) (string, bool) {
	c = strings.TrimPrefix(c, "#")
	return strings.ToLower(c), colorPattern.MatchString(c)
}

// Labels lists the repository's labels by name.
func (s *Service) Labels(ctx context.Context, repoID int64, limit, offset int) ([]*Label, error) {
	return collect(scanLabel)(s.DB.QueryContext(ctx, `SELECT `+labelColumns+` FROM labels l WHERE l.repository_id = $1
		ORDER BY lower(l.name) LIMIT $2 OFFSET $3`, repoID, limit, offset))
}

// MilestoneLabels lists the labels of the milestone's issues (and pull
// requests), each once, by name.
func (s *Service) MilestoneLabels(ctx context.Context, milestoneID int64, limit, offset int) ([]*Label, error) {
	return collect(scanLabel)(s.DB.QueryContext(ctx, `SELECT `+labelColumns+` FROM labels l WHERE l.id IN (
		SELECT il.label_id FROM issue_labels il JOIN issues i ON i.id = il.issue_id WHERE i.milestone_id = $1)
		ORDER BY lower(l.name) LIMIT $2 OFFSET $3`, milestoneID, limit, offset))
}

// Label returns the repository's label by name (any case).
func (s *Service) Label(ctx context.Context, repoID int64, name string) (*Label, error) {
	return labelByName(ctx, s.DB, repoID, name)
}

// CreateLabel adds a label (a taken name is a 422 already_exists) and
// emits label created.
func (s *Service) CreateLabel(ctx context.Context, repo *repos.Repository, actor *accounts.Account, lb Label) (*Label, error) {
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO labels (repository_id, name, color, description, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			repo.ID, lb.Name, lb.Color, lb.Description, tx.Now()).Scan(&lb.ID)
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Invalid("Label", "name", apierr.CodeAlreadyExists)
		} else if err != nil {
			return err
		}
		lb.RepoID = repo.ID
		return s.emitLabel(ctx, tx, repo, actor, "created", &lb, nil)
	})
	return &lb, err
}

// UpdateLabel renames or changes a label (fields "" are kept) and emits
// label edited with what changed.
func (s *Service) UpdateLabel(ctx context.Context, repo *repos.Repository, actor *accounts.Account, name string, newName, color, description *string) (*Label, error) {
	var out *Label
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := labelByName(ctx, tx, repo.ID, name)
		if err != nil {
			return err
		}
		after := *before
		changes := map[string]any{}
		set := func(field string, cur *string, v *string) {
			if v != nil && *v != *cur {
				changes[field] = map[string]any{"from": *cur}
				*cur = *v
			}
		}
		set("name", &after.Name, newName)
		set("color", &after.Color, color)
		set("description", &after.Description, description)
		_, err = tx.ExecContext(ctx, `UPDATE labels SET name = $1, color = $2, description = $3 WHERE id = $4`, after.Name, after.Color, after.Description, after.ID)
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Invalid("Label", "name", apierr.CodeAlreadyExists)
		} else if err != nil {
			return err
		}
		out = &after
		return s.emitLabel(ctx, tx, repo, actor, "edited", out, map[string]any{"changes": changes})
	})
	return out, err
}

// DeleteLabel removes a label from the repository and its issues and
// emits label deleted.
func (s *Service) DeleteLabel(ctx context.Context, repo *repos.Repository, actor *accounts.Account, name string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		lb, err := labelByName(ctx, tx, repo.ID, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM labels WHERE id = $1`, lb.ID); err != nil {
			return store.Normalize(err)
		}
		return s.emitLabel(ctx, tx, repo, actor, "deleted", lb, nil)
	})
}

func (s *Service) emitLabel(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, lb *Label, extra map[string]any) error {
	payload := map[string]any{"action": action, "label": toLabelJSON(urlsOf(httpapi.BaseURL(ctx), repo), lb)}
	for k, v := range extra {
		payload[k] = v
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "label", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private})
}

// setLabels adds the named labels to an issue (creating those the
// repository lacks, with DefaultColor) and, with replace, removes the
// others; it returns the labels added and removed.
func setLabels(ctx context.Context, tx store.Q, repo *repos.Repository, issueID int64, names []string, replace bool) (added, removed []*Label, err error) {
	current, err := collect(scanLabel)(tx.QueryContext(ctx, `SELECT `+labelColumns+` FROM issue_labels il JOIN labels l ON l.id = il.label_id
		WHERE il.issue_id = $1`, issueID))
	if err != nil {
		return nil, nil, err
	}
	want := map[int64]bool{}
	for _, name := range names {
		lb, err := ensureLabel(ctx, tx, repo.ID, name)
		if err != nil {
			return nil, nil, err
		}
		if want[lb.ID] {
			continue
		}
		want[lb.ID] = true
		if !hasLabel(current, lb.ID) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO issue_labels (issue_id, label_id) VALUES ($1, $2)`, issueID, lb.ID); err != nil {
				return nil, nil, store.Normalize(err)
			}
			added = append(added, lb)
		}
	}
	for _, lb := range current {
		if replace && !want[lb.ID] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM issue_labels WHERE issue_id = $1 AND label_id = $2`, issueID, lb.ID); err != nil {
				return nil, nil, store.Normalize(err)
			}
			removed = append(removed, lb)
		}
	}
	return added, removed, nil
}

func hasLabel(list []*Label, id int64) bool {
	for _, lb := range list {
		if lb.ID == id {
			return true
		}
	}
	return false
}

// ensureLabel is the repository's label of that name, created when
// missing.
func ensureLabel(ctx context.Context, tx store.Q, repoID int64, name string) (*Label, error) {
	if strings.TrimSpace(name) == "" || apierr.TooLongFor(name, MaxLabelName) {
		return nil, apierr.Invalid("Label", "name", apierr.CodeInvalid)
	}
	lb, err := labelByName(ctx, tx, repoID, name)
	if !errors.Is(err, store.ErrNotFound) {
		return lb, err
	}
	lb = &Label{RepoID: repoID, Name: name, Color: DefaultColor}
	err = tx.QueryRowContext(ctx, `INSERT INTO labels (repository_id, name, color, description, created_at) VALUES ($1, $2, $3, '', $4) RETURNING id`,
		repoID, name, DefaultColor, store.Now()).Scan(&lb.ID)
	return lb, store.Normalize(err)
}

// IssueLabels changes an issue's labels: add (replace false) or set
// (replace true) names, or remove the one named remove ("" and replace
// with no names: all). It emits issues labeled and unlabeled and
// returns the issue's labels.
func (s *Service) IssueLabels(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, names []string, replace bool, remove string) ([]*Label, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		var added, removed []*Label
		if remove != "" {
			removed, err = removeLabel(ctx, tx, is, remove)
		} else {
			added, removed, err = setLabels(ctx, tx, repo, is.ID, names, replace)
		}
		if err != nil {
			return err
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitEach(ctx, tx, repo, actor, out, labelEvents(urlsOf(httpapi.BaseURL(ctx), repo), added, removed))
	})
	if err != nil {
		return nil, err
	}
	return out.Labels, nil
}

// removeLabel takes one label off an issue: 404 "Label does not exist"
// when the issue does not have it.
func removeLabel(ctx context.Context, tx store.Q, is *Issue, name string) ([]*Label, error) {
	for _, lb := range is.Labels {
		if strings.EqualFold(lb.Name, name) {
			_, err := tx.ExecContext(ctx, `DELETE FROM issue_labels WHERE issue_id = $1 AND label_id = $2`, is.ID, lb.ID)
			return []*Label{lb}, store.Normalize(err)
		}
	}
	return nil, apierr.New(404, "Label does not exist")
}
