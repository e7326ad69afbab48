//go:build unix

package app_test

import (
	"context"
	"forgeapi/internal/apptest"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quickStartBuild is the first block of the README's quick start. The
// test does not run it: it builds the binary into a temporary directory
// instead of the checkout, and puts that directory first on PATH.
const quickStartBuild = `go build -o forgeapi ./cmd/forgeapi && export PATH="$PWD:$PATH"`

// TestQuickStart runs the README's quick start as written: its sh blocks,
// in order, in one bash with errexit and pipefail, with a fresh HOME and
// TMPDIR (so the mktemp -d directory, the data and git's configuration
// start empty), free ports in FORGEAPI_ADDR and FORGEAPI_SSH_ADDR, and the forgeapi built from
// this checkout on PATH in place of the first block. Every command must
// succeed, and every line of the text blocks (the output the README
// shows; "..." stands for any text within a line) must appear in the
// output. The last line shown is the address of the repository page the
// quick start made, and the server is left running for it.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the forgeapi binary")
	}
	apptest.OnceWithoutRace(t) // the README's reader does not build with -race
	for _, tool := range []string{"git", "curl", "bash", "go", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the quick start needs %s: %v", tool, err)
		}
	}
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	scripts, outputs := quickStartBlocks(t, string(readme))
	if len(scripts) < 2 || scripts[0] != quickStartBuild {
		t.Fatalf("the quick start must begin with the block\n\t%s\nthat this test replaces; it begins with %q", quickStartBuild, scripts[0])
	}
	if len(outputs) == 0 || !strings.HasPrefix(outputs[len(outputs)-1], "repository page: ") {
		t.Fatalf("the quick start must end with the address of the repository page it made (a last output line \"repository page: ...\"); it ends with %q", outputs)
	}

	tmp := t.TempDir()
	bin, home, tmpdir := filepath.Join(tmp, "bin"), filepath.Join(tmp, "home"), filepath.Join(tmp, "tmp")
	for _, d := range []string{bin, home, tmpdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	apptest.ServerBinary(t, bin)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	script := "set -e -o pipefail\ntrap 'echo \"quick start: failed: $BASH_COMMAND\" >&2' ERR\n" +
		strings.Join(scripts[1:], "\n")
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = tmp
	cmd.Env = quickStartEnv(t, bin, home, tmpdir)
	// Its own process group, so that the server and the receiver it
	// starts in the background die with it whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Files, not pipes: Wait returns when bash ends, even when a
	// background process it left behind still holds its output.
	stdoutFile, stderrFile := filepath.Join(tmp, "stdout"), filepath.Join(tmp, "stderr")
	cmd.Stdout, cmd.Stderr = createFile(t, stdoutFile), createFile(t, stderrFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	err = cmd.Wait()
	stdout, stderr := readFile(t, stdoutFile), readFile(t, stderrFile)
	if err != nil {
		t.Fatalf("the quick start failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, want := range outputs {
		if !outputHasLine(stdout, want) {
			t.Errorf("the output lacks the README's line\n\t%s\nstdout:\n%s", want, stdout)
		}
	}
}

func createFile(t *testing.T, path string) *os.File {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// quickStartBlocks returns the sh and text blocks of the README's
// "## Quick start" section: the scripts, and the non-empty lines of the
// outputs.
func quickStartBlocks(t *testing.T, readme string) (scripts, outputs []string) {
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal("README.md has no ## Quick start section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var block []string
	kind := ""
	for _, line := range strings.Split(section, "\n") {
		switch {
		case kind == "" && strings.HasPrefix(line, "```"):
			kind, block = strings.TrimPrefix(line, "```"), nil
		case kind != "" && line == "```":
			switch kind {
			case "sh":
				scripts = append(scripts, strings.Join(block, "\n"))
			case "text":
				for _, l := range block {
					if l = strings.TrimSpace(l); l != "" {
						outputs = append(outputs, l)
					}
				}
			default:
				t.Fatalf("quick start: a block of kind %q; use sh (run) or text (expected output)", kind)
			}
			kind = ""
		case kind != "":
			block = append(block, line)
		}
	}
	if kind != "" {
		t.Fatal("quick start: an unclosed code block")
	}
	return scripts, outputs
}

// quickStartEnv is a newcomer's environment: PATH with the binary first,
// an empty HOME and TMPDIR, no FORGEAPI_* settings but free ports (API and SSH), and
// the Go caches of this machine (so that the receiver builds quickly).
func quickStartEnv(t *testing.T, bin, home, tmpdir string) []string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sshAddr := ln.Addr().String()
	ln.Close()
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + tmpdir,
		"FORGEAPI_ADDR=" + addr,
		"FORGEAPI_SSH_ADDR=" + sshAddr,
		"GIT_CONFIG_NOSYSTEM=1",
		"LC_ALL=C",
	}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		if v := strings.TrimSpace(string(out)); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// outputHasLine reports whether some line of out holds the pieces of
// want between its "..." in order.
func outputHasLine(out, want string) bool {
	pieces := strings.Split(want, "...")
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, p := range pieces {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestOutputHasLine pins the matching of the README's expected lines.
func TestOutputHasLine(t *testing.T) {
	t.Parallel()
	out := "first line\n[{\"a\":1,\"b\":2,\"c\":3}]\n"
	for want, has := range map[string]bool{
		"first line": true, `[{"a":1,...,"c":3}]`: true, `"c":3...,"a":1`: false,
		"first...2": false, "missing": false,
	} {
		if got := outputHasLine(out, want); got != has {
			t.Errorf("outputHasLine(%q) = %v, want %v", want, got, has)
		}
	}
}
