// Package prereceive serves the self-managed edition's pre-receive hooks:
// environments (where hooks run; the default one, made by the migration,
// is the host itself), hooks (a script kept in a repository, its
// environment, its enforcement: enabled, disabled or testing, and whether
// organizations may override it), and the organizations' and repositories'
// overrides of a hook's enforcement where the level above allows it.
//
// CheckPush, a githost.PushCheck, runs the scripts of the hooks in force
// for a repository before any reference of a push moves, git's pushes
// (HTTP and SSH) and the server's own (the contents API) alike: the
// pushed updates on stdin as "<old> <new> <ref>" lines, the platform's
// environment variables set, the push's objects readable through GIT_DIR.
// A script that exits non-zero refuses an enabled hook's push with its
// output; a testing hook's result is logged and the push goes through.
//
// Scripts run on the host, with the server's own git and shell, whatever
// their environment: environments other than the default one are kept and
// listed, but their images are never downloaded or used.
//
// Every operation is a site administrator's alone (classic tokens: the
// site_admin scope); anyone else gets the platform's 403, and anonymous
// callers its 404.
package prereceive

import (
	"context"
	"log/slog"
	"time"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Enforcement values of a hook, an organization's or a repository's
// setting.
const (
	Enabled  = "enabled"
	Disabled = "disabled"
	Testing  = "testing"
)

func validEnforcement(s string) bool { return s == Enabled || s == Disabled || s == Testing }

// Service holds the environments, hooks and overrides, and runs hooks.
type Service struct {
	DB *store.DB
	// Repos finds the scripts' repositories on disk.
	Repos *repos.Service
	// Logger receives testing hooks' results and script failures; nil
	// is slog.Default().
	Logger *slog.Logger
	// Timeout bounds one script's run; zero is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is how long a hook's script may run, as on the platform:
// a script still running then refuses the push.
const DefaultTimeout = 5 * time.Second

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Environment is a pre-receive environment.
type Environment struct {
	ID         int64
	Name       string
	ImageURL   string
	Default    bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
	HooksCount int
}

// Hook is a pre-receive hook as the site administrator set it.
type Hook struct {
	ID              int64
	Name            string
	Script          string
	RepoID          int64
	EnvironmentID   int64
	Enforcement     string
	AllowDownstream bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const envColumns = `e.id, e.name, e.image_url, e.is_default, e.created_at, e.updated_at,
	(SELECT count(*) FROM pre_receive_hooks h WHERE h.environment_id = e.id)`

func scanEnvironment(s store.Scanner) (*Environment, error) {
	var e Environment
	if err := s.Scan(&e.ID, &e.Name, &e.ImageURL, &e.Default, &e.CreatedAt, &e.UpdatedAt, &e.HooksCount); err != nil {
		return nil, store.Normalize(err)
	}
	return &e, nil
}

// Environments lists every environment, by id.
func Environments(ctx context.Context, q store.Q) ([]*Environment, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+envColumns+` FROM pre_receive_environments e ORDER BY e.id`)
	return store.ScanAll(rows, err, scanEnvironment)
}

// EnvironmentByID returns an environment or store.ErrNotFound.
func EnvironmentByID(ctx context.Context, q store.Q, id int64) (*Environment, error) {
	return scanEnvironment(q.QueryRowContext(ctx, `SELECT `+envColumns+` FROM pre_receive_environments e WHERE e.id = $1`, id))
}

const hookColumns = `id, name, script, script_repository_id, environment_id, enforcement, allow_downstream, created_at, updated_at`

func scanHook(s store.Scanner) (*Hook, error) {
	var h Hook
	if err := s.Scan(&h.ID, &h.Name, &h.Script, &h.RepoID, &h.EnvironmentID, &h.Enforcement, &h.AllowDownstream,
		&h.CreatedAt, &h.UpdatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	return &h, nil
}

// Hooks lists every hook, by id.
func Hooks(ctx context.Context, q store.Q) ([]*Hook, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+hookColumns+` FROM pre_receive_hooks ORDER BY id`)
	return store.ScanAll(rows, err, scanHook)
}

// HookByID returns a hook or store.ErrNotFound.
func HookByID(ctx context.Context, q store.Q, id int64) (*Hook, error) {
	return scanHook(q.QueryRowContext(ctx, `SELECT `+hookColumns+` FROM pre_receive_hooks WHERE id = $1`, id))
}
