package apptest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GHCLI runs the gh CLI as a user sets it up for a self-managed server:
// GH_HOST, GH_ENTERPRISE_TOKEN and SSL_CERT_FILE, in a HOME of its own.
type GHCLI struct {
	// Host is GH_HOST, and the host of --repo HOST/OWNER/REPO arguments.
	Host string
	// Dir is gh's working directory: by default a directory outside any
	// git work tree (gh reads the one it runs in).
	Dir string
	// Env is added to gh's environment (GH_EDITOR=..., say).
	Env []string

	path, home, token, caFile string
}

// GH returns a gh runner against env (a server started WithTLS) with
// token. Proxied runs it through env's validating proxy, so that every
// exchange gh makes is checked against the platform's description;
// otherwise gh talks to the server itself. It skips the test without gh,
// except in CI, which installs it, and under the race detector
// (OnceWithoutRace).
func GH(t testing.TB, env *Env, token string, proxied bool) *GHCLI {
	t.Helper()
	OnceWithoutRace(t)
	path, err := exec.LookPath("gh")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI lacks the gh CLI")
		}
		t.Skip("gh is not installed")
	}
	base := env.URL
	if proxied {
		base = env.ValidatingProxy()
	}
	home := t.TempDir()
	return &GHCLI{Host: strings.TrimPrefix(base, "https://"), Dir: home, path: path, home: home, token: token, caFile: env.Main.CAFile()}
}

// Run runs gh with args and returns what it printed (standard output
// and error); a failure fails the test with that output.
func (g *GHCLI) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := g.command(args).CombinedOutput()
	if err != nil {
		t.Fatalf("gh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Stdout is Run that returns standard output alone (diffs, --json); a
// failure fails the test with both.
func (g *GHCLI) Stdout(t testing.TB, args ...string) string {
	t.Helper()
	out, err := g.command(args).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			out = append(out, exit.Stderr...)
		}
		t.Fatalf("gh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (g *GHCLI) command(args []string) *exec.Cmd {
	cmd := exec.Command(g.path, args...)
	cmd.Dir = g.Dir
	cmd.Env = append([]string{"HOME=" + g.home, "GH_CONFIG_DIR=" + filepath.Join(g.home, "gh"), "GH_PROMPT_DISABLED=1",
		"GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_HOST=" + g.Host, "GH_ENTERPRISE_TOKEN=" + g.token,
		"SSL_CERT_FILE=" + g.caFile, "PATH=" + os.Getenv("PATH")}, g.Env...)
	return cmd
}

// Try runs gh with args and returns what it printed (standard output and
// error) and its error, for commands a test expects to fail.
func (g *GHCLI) Try(args ...string) (string, error) {
	out, err := g.command(args).CombinedOutput()
	return string(out), err
}
