package gitssh_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"forgeapi/internal/git/gitssh"
	"forgeapi/internal/testwait"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, service, owner, repo, err string }{
		{"git-upload-pack 'octo/hello.git'", "git-upload-pack", "octo", "hello", ""},
		{"git-receive-pack '/octo/hello.git'", "git-receive-pack", "octo", "hello", ""},
		{"git upload-pack '~/octo/hello'", "git-upload-pack", "octo", "hello", ""},
		{"git-upload-pack octo/hello.git", "git-upload-pack", "octo", "hello", ""},
		{`git-upload-pack 'it'\''s/hello.git'`, "git-upload-pack", "it's", "hello", ""},
		{"git-upload-pack 'octo/hello/extra.git'", "", "", "", "Repository not found."},
		{"git-upload-pack 'aa5a315d61ae9438b18d.git'", "git-upload-pack", "", "aa5a315d61ae9438b18d", ""},
		{"git-receive-pack '/aa5a315d61ae9438b18d.git'", "git-receive-pack", "", "aa5a315d61ae9438b18d", ""},
		{"git-upload-pack '/.git'", "", "", "", "Repository not found."},
		{"git-upload-pack '/octo/'", "", "", "", "Repository not found."},
		{"git-upload-pack '//hello.git'", "", "", "", "Repository not found."},
		{"git-upload-pack 'octo/hello", "", "", "", "Repository not found."},
		{"git-upload-archive 'octo/hello.git'", "git-upload-archive", "octo", "hello", ""},
		{"git-upload-archive2 'octo/hello.git'", "", "", "", "Invalid command"},
		{"ls /", "", "", "", "Invalid command"},
	} {
		cmd, err := gitssh.ParseCommand(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || cmd.Service != tc.service || cmd.Owner != tc.owner || cmd.Repo != tc.repo {
			t.Errorf("%q: %+v %v", tc.line, cmd, err)
		}
	}
}

// keyHandler knows one key, and answers every command with its
// repository's name and exit status 3.
type keyHandler struct{ key ssh.PublicKey }

func (h keyHandler) Authenticate(_ context.Context, key ssh.PublicKey) (*gitssh.Identity, error) {
	if string(key.Marshal()) != string(h.key.Marshal()) {
		return nil, nil
	}
	return &gitssh.Identity{Name: "octo"}, nil
}

func (h keyHandler) Run(_ context.Context, _ *gitssh.Identity, cmd gitssh.Command) (int, error) {
	switch cmd.Repo {
	case "missing":
		return 0, errors.New("Repository not found.")
	case "block": // runs until its input ends
		_, _ = io.Copy(io.Discard, cmd.Stdin)
		return 0, nil
	}
	_, _ = io.WriteString(cmd.Stdout, cmd.Service+" "+cmd.Owner+"/"+cmd.Repo+" "+cmd.Protocol)
	return 3, nil
}

// start serves a Server with cfg on 127.0.0.1 and returns it, its
// address and a client configuration with the handler's key.
func start(t *testing.T, cfg gitssh.Config) (*gitssh.Server, string, *ssh.ClientConfig) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := ssh.NewPublicKey(pub)
	signer, _ := ssh.NewSignerFromKey(priv)
	if cfg.HostKeyFile == "" {
		cfg.HostKeyFile = filepath.Join(t.TempDir(), "host_key")
	}
	srv, err := gitssh.New(cfg, keyHandler{key: sshPub})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	client := &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(srv.HostKey()), Timeout: 10 * time.Second}
	return srv, ln.Addr().String(), client
}

// TestSessions runs a command, a refused one and the greeting, and
// checks a stranger's key is refused and the host key is kept.
func TestSessions(t *testing.T) {
	t.Parallel()
	hostKeyFile := filepath.Join(t.TempDir(), "ssh", "host_key")
	srv, addr, client := start(t, gitssh.Config{HostKeyFile: hostKeyFile})
	conn, err := ssh.Dial("tcp", addr, client)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	run := func(cmd string, env ...string) (string, string, error) {
		s, err := conn.NewSession()
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		defer s.Close()
		if len(env) == 2 {
			_ = s.Setenv(env[0], env[1])
		}
		var out, errOut strings.Builder
		s.Stdout, s.Stderr = &out, &errOut
		if cmd == "" {
			err = s.Shell()
			if err == nil {
				err = s.Wait()
			}
		} else {
			err = s.Run(cmd)
		}
		return out.String(), errOut.String(), err
	}
	out, _, err := run("git-upload-pack 'acme/app.git'", "GIT_PROTOCOL", "version=2")
	var exit *ssh.ExitError
	if out != "git-upload-pack acme/app version=2" || !errors.As(err, &exit) || exit.ExitStatus() != 3 {
		t.Fatalf("upload-pack: %q %v", out, err)
	}
	if _, errOut, err := run("git-receive-pack 'acme/missing.git'"); err == nil || errOut != "ERROR: Repository not found.\n" {
		t.Fatalf("a missing repository: %q %v", errOut, err)
	}
	if _, errOut, err := run("rm -rf /"); err == nil || !strings.Contains(errOut, "only git-upload-pack, git-receive-pack and git-upload-archive are served") {
		t.Fatalf("another command: %q %v", errOut, err)
	}
	if _, errOut, err := run(""); err == nil || errOut != "Hi octo! You've successfully authenticated, but Service does not provide shell access.\n" {
		t.Fatalf("shell: %q %v", errOut, err)
	}
	_, strangerKey, _ := ed25519.GenerateKey(rand.Reader)
	stranger, _ := ssh.NewSignerFromKey(strangerKey)
	other := *client
	other.Auth = []ssh.AuthMethod{ssh.PublicKeys(stranger)}
	if c, err := ssh.Dial("tcp", addr, &other); err == nil {
		c.Close()
		t.Fatal("a stranger's key authenticated")
	}
	again, err := gitssh.LoadOrCreateHostKey(hostKeyFile)
	if err != nil || string(again.PublicKey().Marshal()) != string(srv.HostKey().Marshal()) {
		t.Fatalf("the host key was not kept: %v", err)
	}
}

// TestUnauthenticatedConnectionsAreBounded holds the one handshake slot
// with a silent connection: the next connection is closed before the
// server says a word, until the first one goes.
func TestUnauthenticatedConnectionsAreBounded(t *testing.T) {
	t.Parallel()
	_, addr, _ := start(t, gitssh.Config{MaxUnauthenticated: 1})
	banner := func() string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(silent).ReadString('\n'); err != nil { // the server's version: it holds the slot
		t.Fatal(err)
	}
	if got := banner(); got != "" {
		t.Fatalf("a second handshake was served: %q", got)
	}
	silent.Close()
	testwait.Until(t, "a handshake is served again", func() bool { return strings.HasPrefix(banner(), "SSH-2.0-forgeapi") })
}

// TestSessionsAreBounded runs one session that waits for its input with
// MaxSessions 1: a second session is refused until the first ends.
func TestSessionsAreBounded(t *testing.T) {
	t.Parallel()
	_, addr, client := start(t, gitssh.Config{MaxSessions: 1})
	conn, err := ssh.Dial("tcp", addr, client)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	first, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := first.StdinPipe()
	if err := first.Start("git-upload-pack 'a/block'"); err != nil {
		t.Fatal(err)
	}
	if s, err := conn.NewSession(); err == nil || !strings.Contains(err.Error(), "too many sessions") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("a second session: %v", err)
	}
	stdin.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("the first session: %v", err)
	}
	testwait.For(t, "a session is served again", func() error {
		s, err := conn.NewSession()
		if err == nil {
			s.Close()
		}
		return err
	})
}

// BenchmarkHandshake measures a new connection's handshake and public
// key authentication (the server's and the client's work, in one
// process), and one session's greeting.
func BenchmarkHandshake(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	signer, _ := ssh.NewSignerFromKey(priv)
	srv, err := gitssh.New(gitssh.Config{HostKeyFile: filepath.Join(b.TempDir(), "host_key")}, keyHandler{key: sshPub})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client := &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(srv.HostKey())}
	b.ResetTimer()
	for range b.N {
		conn, err := ssh.Dial("tcp", ln.Addr().String(), client)
		if err != nil {
			b.Fatal(err)
		}
		conn.Close()
	}
}
