package gitread_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// workRepo is a non-bare repository built with the git CLI for a test,
// isolated from the user's and the system's git configuration.
type workRepo struct {
	t   testing.TB
	dir string
	env []string
	// tick advances the commit dates so that every commit has its own time.
	tick int
}

func newWorkRepo(t testing.TB) *workRepo {
	t.Helper()
	home := t.TempDir()
	w := &workRepo{t: t, dir: filepath.Join(home, "work"), env: gitEnv(home)}
	w.git("-c", "init.defaultBranch=main", "init", "-q", w.dir)
	return w
}

// gitEnv is an environment that isolates git from the machine's configuration.
func gitEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Author",
		"GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Carl Committer",
		"GIT_COMMITTER_EMAIL=carl@example.com",
	}
}

// gitDir is the directory to open with gitread.
func (w *workRepo) gitDir() string { return filepath.Join(w.dir, ".git") }

// git runs git in the work tree and returns its trimmed stdout.
func (w *workRepo) git(args ...string) string {
	w.t.Helper()
	return w.gitInput("", args...)
}

func (w *workRepo) gitInput(stdin string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	if _, err := os.Stat(w.dir); err == nil {
		cmd.Dir = w.dir
	}
	date := fmt.Sprintf("DATE=@%d +0000", 1700000000+w.tick)
	cmd.Env = append(append([]string{}, w.env...),
		"GIT_AUTHOR_"+date, "GIT_COMMITTER_"+date)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// commit writes files (a nil content deletes the file), commits them all
// with msg and returns the new commit's SHA.
func (w *workRepo) commit(msg string, files map[string]*string) string {
	w.t.Helper()
	for name, content := range files {
		p := filepath.Join(w.dir, name)
		if content == nil {
			if err := os.Remove(p); err != nil {
				w.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	w.tick++
	w.git("add", "-A")
	w.git("commit", "-q", "--allow-empty", "-m", msg)
	return w.git("rev-parse", "HEAD")
}

// fastImport appends n commits to branch with git fast-import, each adding
// file d<k/100>/f<k>.txt (k = start+i), starting from the branch's current tip if it has one.
func (w *workRepo) fastImport(branch string, start, n int) string {
	w.t.Helper()
	var b strings.Builder
	parent := ""
	if out := w.gitAllowFail("rev-parse", "--verify", "-q", "refs/heads/"+branch); out != "" {
		parent = out
	}
	for i := range n {
		k := start + i
		w.tick++
		msg := fmt.Sprintf("commit %d", k)
		fmt.Fprintf(&b, "commit refs/heads/%s\n", branch)
		fmt.Fprintf(&b, "author Ada Author <ada@example.com> %d +0000\n", 1700000000+w.tick)
		fmt.Fprintf(&b, "committer Carl Committer <carl@example.com> %d +0000\n", 1700000000+w.tick)
		fmt.Fprintf(&b, "data %d\n%s\n", len(msg), msg)
		if i == 0 && parent != "" {
			fmt.Fprintf(&b, "from %s\n", parent)
		}
		content := fmt.Sprintf("content %d\n", k)
		fmt.Fprintf(&b, "M 644 inline d%d/f%d.txt\ndata %d\n%s\n", k/100, k, len(content), content)
	}
	w.gitInput(b.String(), "fast-import", "--quiet")
	return w.git("rev-parse", "refs/heads/"+branch)
}

func (w *workRepo) gitAllowFail(args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func str(s string) *string { return &s }
