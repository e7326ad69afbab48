package actions

import (
	"context"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"forgeapi/internal/store"
)

// Workflow-level `concurrency`, as the platform runs it: a run belongs to
// its group (the key's string, or its group:, with ${{ }} expressions of
// the github context); a new run of a group cancels the group's older
// runs that have not started, and with cancel-in-progress: true the ones
// in progress too; a run's jobs are not claimed while an older run of its
// group is not completed, so at most one run of a group runs at a time.
// Expressions are read here, not by act: github.workflow, ref,
// ref_name, head_ref, base_ref, event_name, sha, repository,
// repository_owner, actor, run_id, string literals and ||.

// concurrency is a workflow's concurrency key.
type concurrency struct {
	Group            string
	CancelInProgress bool
}

// workflowConcurrency reads the workflow's concurrency key (zero without
// one).
func workflowConcurrency(content string) concurrency {
	var doc struct {
		Concurrency yaml.Node `yaml:"concurrency"`
	}
	if yaml.Unmarshal([]byte(content), &doc) != nil {
		return concurrency{}
	}
	n := doc.Concurrency
	switch n.Kind {
	case yaml.ScalarNode:
		return concurrency{Group: n.Value}
	case yaml.MappingNode:
		var c concurrency
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch n.Content[i].Value {
			case "group":
				c.Group = n.Content[i+1].Value
			case "cancel-in-progress":
				c.CancelInProgress = n.Content[i+1].Value == "true"
			}
		}
		return c
	}
	return concurrency{}
}

var expression = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// evalGroup replaces the group's expressions with their values in ctx
// (the github context's fields).
func evalGroup(group string, ctx map[string]string) string {
	return expression.ReplaceAllStringFunc(group, func(m string) string {
		for _, operand := range strings.Split(expression.FindStringSubmatch(m)[1], "||") {
			operand = strings.TrimSpace(operand)
			v := ""
			if strings.HasPrefix(operand, "'") && strings.HasSuffix(operand, "'") && len(operand) >= 2 {
				v = operand[1 : len(operand)-1]
			} else {
				v = ctx[strings.TrimPrefix(operand, "github.")]
			}
			if v != "" {
				return v
			}
		}
		return ""
	})
}

// joinGroup sets the new run's group (after its insert, so that
// github.run_id is known) and cancels the group's older runs: those not
// started, and those in progress too with cancel-in-progress.
func (s *Service) joinGroup(ctx context.Context, tx *store.Tx, r *Run, t trigger) error {
	c := workflowConcurrency(r.WorkflowFile)
	if c.Group == "" || r.Status == StatusCompleted {
		return nil
	}
	refName := t.Ref
	for _, p := range []string{"refs/heads/", "refs/tags/"} {
		refName = strings.TrimPrefix(refName, p)
	}
	vars := map[string]string{"workflow": r.Name, "ref": t.Ref, "ref_name": refName, "event_name": r.Event, "sha": r.HeadSHA,
		"repository": t.Repo.FullName(), "repository_owner": t.Repo.Owner.Login, "run_id": itoa(r.ID)}
	if t.Actor != nil {
		vars["actor"] = t.Actor.Login
	}
	if t.Event == "pull_request" {
		vars["base_ref"] = t.Base
		if t.Branch != nil {
			vars["head_ref"] = *t.Branch
		}
	}
	group := evalGroup(c.Group, vars)
	if _, err := tx.ExecContext(ctx, `UPDATE actions_runs SET concurrency_group = $1 WHERE id = $2`, group, r.ID); err != nil {
		return store.Normalize(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM actions_runs WHERE repository_id = $1 AND concurrency_group = $2
		AND id < $3 AND status <> 'completed' ORDER BY id`, r.RepoID, group, r.ID)
	older, err := store.ScanAll(rows, err, store.ScanID)
	if err != nil {
		return err
	}
	for _, id := range older {
		o, err := runByID(ctx, tx, r.RepoID, id)
		if err != nil {
			return err
		}
		if o.Status == StatusInProgress && !c.CancelInProgress {
			continue
		}
		if _, err := s.cancelTx(ctx, tx, o); err != nil {
			return err
		}
	}
	return nil
}

// concurrencyBlocked reports whether an older run of the run's group is
// not completed (its jobs wait).
func concurrencyBlocked(ctx context.Context, tx *store.Tx, r *Run) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions_runs o JOIN actions_runs r ON r.id = $1
		WHERE r.concurrency_group <> '' AND o.repository_id = r.repository_id AND o.concurrency_group = r.concurrency_group
		AND o.id < r.id AND o.status <> 'completed'`, r.ID).Scan(&n)
	return n > 0, err
}
