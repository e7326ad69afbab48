package issues

import (
	"context"
	"fmt"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// DefaultLabels are the labels the platform gives every new repository:
// name, color and description as it creates them.
var DefaultLabels = []Label{
	{Name: "bug", Color: "d73a4a", Description: "Something isn't working"},
	{Name: "documentation", Color: "0075ca", Description: "Improvements or additions to documentation"},
	{Name: "duplicate", Color: "cfd3d7", Description: "This issue or pull request already exists"},
	{Name: "enhancement", Color: "a2eeef", Description: "New feature or request"},
	{Name: "good first issue", Color: "7057ff", Description: "Good for newcomers"},
	{Name: "help wanted", Color: "008672", Description: "Extra attention is needed"},
	{Name: "invalid", Color: "e4e669", Description: "This doesn't seem right"},
	{Name: "question", Color: "d876e3", Description: "Further information is requested"},
	{Name: "wontfix", Color: "ffffff", Description: "This will not be worked on"},
}

// CreateDefaultLabels adds DefaultLabels to the new repository repoID in
// the creating transaction tx, marked default. It emits no label event:
// the platform sends none for the labels a repository is created with.
func CreateDefaultLabels(ctx context.Context, tx store.Q, repoID int64) error {
	_, err := tx.ExecContext(ctx, defaultLabelsInsert, defaultLabelsArgs(repoID, store.Now())...)
	return store.Normalize(err)
}

// defaultLabelsInsert is the one INSERT of DefaultLabels: per label its
// name, color and description, after the repository ($1) and the time ($2).
var defaultLabelsInsert = func() string {
	var b strings.Builder
	b.WriteString(`INSERT INTO labels (repository_id, created_at, name, color, description, is_default) VALUES `)
	for i := range DefaultLabels {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "($1, $2, $%d, $%d, $%d, TRUE)", 3+3*i, 4+3*i, 5+3*i)
	}
	return b.String()
}()

func defaultLabelsArgs(repoID int64, now time.Time) []any {
	args := []any{repoID, now}
	for _, lb := range DefaultLabels {
		args = append(args, lb.Name, lb.Color, lb.Description)
	}
	return args
}
