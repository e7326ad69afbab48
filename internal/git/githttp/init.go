package githttp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"forgeapi/internal/git/gitref"
)

// repoConfig is the git configuration Init ensures on every repository.
var repoConfig = [...]struct{ section, key, value string }{
	{"http", "receivepack", "true"}, // allow pushes over HTTP; the caller authorises them
	{"receive", "autogc", "false"},  // no detached gc after a push; maintenance is scheduled apart
	// Every reference update is logged in the reference's reflog (tags
	// too), so that what a push applied can be told from git afterwards;
	// entries go after a week at the next gc.
	{"core", "logallrefupdates", "always"},
	{"gc", "reflogexpire", "7.days"},
	{"gc", "reflogexpireunreachable", "7.days"},
}

// Init creates an empty bare repository in dir whose HEAD points to
// refs/heads/<defaultBranch>, with pushes over HTTP enabled and forgeapi's
// pre-receive and post-receive hooks installed. It is idempotent: on an
// existing repository it leaves HEAD and history alone and (re)writes the
// configuration and the hooks. It needs no git binary.
func Init(dir, defaultBranch string) error {
	branch := plumbing.NewBranchReferenceName(defaultBranch)
	if !gitref.ValidBranch(defaultBranch) {
		return fmt.Errorf("githttp: init %s: invalid default branch %q", dir, defaultBranch)
	}
	repo, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.PlainInitWithOptions(dir, &git.PlainInitOptions{
			Bare:        true,
			InitOptions: git.InitOptions{DefaultBranch: branch},
		})
	}
	if err != nil {
		return fmt.Errorf("githttp: init %s: %w", dir, err)
	}
	if err := ensureConfig(repo); err != nil {
		return fmt.Errorf("githttp: init %s: %w", dir, err)
	}
	if err := installHooks(dir); err != nil {
		return fmt.Errorf("githttp: init %s: %w", dir, err)
	}
	return nil
}

// SetDefaultBranch points HEAD of the bare repository in dir to
// refs/heads/<branch> (the branch need not exist yet).
func SetDefaultBranch(dir, branch string) error {
	name := plumbing.NewBranchReferenceName(branch)
	if !gitref.ValidBranch(branch) {
		return fmt.Errorf("githttp: invalid branch name %q", branch)
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("githttp: open %s: %w", dir, err)
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, name)); err != nil {
		return fmt.Errorf("githttp: set HEAD of %s: %w", dir, err)
	}
	return nil
}

func ensureConfig(repo *git.Repository) error {
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	for _, c := range repoConfig {
		cfg.Raw.Section(c.section).SetOption(c.key, c.value)
	}
	return repo.SetConfig(cfg)
}

// installHooks writes the hook scripts atomically (write, then rename), so
// that a push running meanwhile sees either the old or the new script.
func installHooks(dir string) error {
	hooksDir := filepath.Join(dir, "hooks")
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{hookPreReceive, hookPostReceive} {
		tmp, err := os.CreateTemp(hooksDir, name+".tmp*")
		if err != nil {
			return err
		}
		_, werr := tmp.WriteString(hookScript(name))
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o755)); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), filepath.Join(hooksDir, name)); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}
