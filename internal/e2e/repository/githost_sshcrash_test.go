package repository_test

import (
	"bufio"
	"crypto/rand"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

var (
	listeningHTTP = regexp.MustCompile(`listening on (http://[0-9.:]+)`)
	listeningSSH  = regexp.MustCompile(`serving git over SSH on ([0-9.]+:[0-9]+)`)
)

// sshServeProcess is a `forgeapi serve --ssh-addr` process on a test's
// data directory.
type sshServeProcess struct {
	sshAddr string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited
}

// serveSSHBinary runs the forgeapi binary on env's data with git over SSH
// on a port of its own, and returns it once both servers listen.
func serveSSHBinary(t *testing.T, bin string, env *apptest.Env) *sshServeProcess {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--ssh-addr", "127.0.0.1:0", "--data", env.DataDir}
	if env.Config.DatabaseURL != "" {
		args = append(args, "--database", env.Config.DatabaseURL)
	}
	s := &sshServeProcess{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, err := s.cmd.StderrPipe()
	apptest.Must(t, "stderr pipe", err)
	s.cmd.Stdout = io.Discard
	apptest.Must(t, "start forgeapi", s.cmd.Start())
	t.Cleanup(s.kill)
	ready := make(chan string, 1)
	go func() {
		var sshAddr string
		http := false
		for sc := bufio.NewScanner(stderr); sc.Scan(); {
			if m := listeningSSH.FindStringSubmatch(sc.Text()); m != nil {
				sshAddr = m[1]
			}
			http = http || listeningHTTP.MatchString(sc.Text())
			if sshAddr != "" && http {
				select {
				case ready <- sshAddr:
				default:
				}
			}
		}
		_ = s.cmd.Wait()
		close(s.done)
	}()
	select {
	case s.sshAddr = <-ready:
		return s
	case <-s.done:
		t.Fatal("forgeapi exited before it listened")
	case <-time.After(60 * time.Second):
		t.Fatal("forgeapi did not start listening")
	}
	return nil
}

// kill ends the process with SIGKILL and waits for it.
func (s *sshServeProcess) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// slowProxy forwards TCP connections to a server, the client's bytes at
// a bounded rate (so that a push's pack takes long enough to be cut in
// the middle), and counts them.
type slowProxy struct {
	ln   net.Listener
	sent atomic.Int64
}

func newSlowProxy(t *testing.T, target string, bytesPerSecond int) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	apptest.Must(t, "proxy listen", err)
	p := &slowProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	const chunk = 16 << 10
	pause := time.Second * chunk / time.Duration(bytesPerSecond)
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			go func() { // server to client, as it comes
				_, _ = io.Copy(client, server)
				client.Close()
			}()
			go func() { // client to server, slowly
				defer server.Close()
				buf := make([]byte, chunk)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						if _, werr := server.Write(buf[:n]); werr != nil {
							return
						}
						p.sent.Add(int64(n))
						time.Sleep(pause)
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// sshPusher runs git over the OpenSSH client with one key.
type sshPusher struct {
	key, knownHosts string
}

// command is the ssh command line (GIT_SSH_COMMAND) for the server at
// addr: one known host (the alias forge) whatever the port.
func (c sshPusher) command(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return "ssh -i " + c.key + " -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=" + c.knownHosts +
		" -o HostKeyAlias=forge -o StrictHostKeyChecking=accept-new -o LogLevel=ERROR -p " + port
}

func (c sshPusher) git(t *testing.T, dir, addr string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(apptest.GitEnv(t.TempDir()), "GIT_SSH_COMMAND="+c.command(addr))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// quarantines lists the push quarantine directories of a bare repository.
func quarantines(dir string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, "objects", "tmp_objdir-incoming-*"))
	return found
}

// TestSSHPushKilledMidway pushes over OpenSSH to a `forgeapi serve
// --ssh-addr` process and kills it with SIGKILL twice: in the middle of a
// multi-megabyte pack (sent through a slow proxy), and right after a
// push moved the branch, before its events may be recorded. After each
// kill the next process starts on the same data. The guarantees are the
// ones of pushes over HTTP: a push cut off mid-pack moves no reference,
// leaves no quarantined objects and no push log entry, and a retry of it
// succeeds; a push killed after its references moved is recorded by the
// push recovery, with exactly one PushEvent; the repository passes git
// fsck.
func TestSSHPushKilledMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the forgeapi binary")
	}
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs the OpenSSH client's %s: %v", tool, err)
		}
	}
	t.Parallel()
	bin := apptest.ServerBinary(t, t.TempDir())

	// Set up with an in-process server, then hand the data to the binary.
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repoDir := env.App.Repos.GitDir(env.Repo(octo, "hello").ID)
	token := env.Token(octo, "repo", "admin:public_key")
	key := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(t, "public key", err)
	_, _, err = env.Client(token).Users.CreateKey(ctx, github.CreateUserKeyRequest{Title: github.Ptr("laptop"), Key: string(pub)})
	apptest.Must(t, "add the key", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	base := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	env.Stop()

	// A commit of 8 MiB that does not compress.
	const size = 8 << 20
	blob := make([]byte, size)
	_, _ = rand.Read(blob)
	apptest.Must(t, "big file", os.WriteFile(filepath.Join(work, "big.bin"), blob, 0o644))
	apptest.Git(t, work, "add", "big.bin")
	apptest.Git(t, work, "commit", "-q", "-m", "A big file")
	big := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	client := sshPusher{key: key, knownHosts: filepath.Join(t.TempDir(), "known_hosts")}
	// pushTo pushes HEAD to main over SSH at addr (a server's or the
	// proxy's: one known host, whatever the port).
	pushTo := func(addr string) (string, error) {
		return client.git(t, work, addr, "push", "-q", "ssh://git@"+addr+"/octo/hello.git", "HEAD:refs/heads/main")
	}

	apptest.Step(t, "a push killed in the middle of its pack moves nothing", func(t *testing.T) {
		srv := serveSSHBinary(t, bin, env)
		proxy := newSlowProxy(t, srv.sshAddr, 2<<20) // 2 MiB/s: the pack takes about 4 s
		pushed := make(chan error, 1)
		go func() {
			_, err := pushTo(proxy.ln.Addr().String())
			pushed <- err
		}()
		for proxy.sent.Load() < size/2 || len(quarantines(repoDir)) == 0 {
			select {
			case err := <-pushed:
				t.Fatalf("the push ended before it was killed: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		srv.kill()
		if err := <-pushed; err == nil {
			t.Fatal("the push cut off by the kill succeeded")
		}
		if got := refValue(t, repoDir, "refs/heads/main"); got != base {
			t.Fatalf("main moved to %s by a push cut off mid-pack", got)
		}
	})

	apptest.Step(t, "the next process cleans up and the retried push succeeds", func(t *testing.T) {
		srv := serveSSHBinary(t, bin, env)
		if q := quarantines(repoDir); len(q) != 0 {
			t.Errorf("quarantined objects left after a restart: %v", q)
		}
		if out, err := pushTo(srv.sshAddr); err != nil {
			t.Fatalf("the retried push: %v\n%s", err, out)
		}
		if got := refValue(t, repoDir, "refs/heads/main"); got != big {
			t.Fatalf("main after the retried push: %s, want %s", got, big)
		}
		srv.kill()
	})

	next := apptest.Commit(t, work, "After the big file", map[string]string{"next.txt": "next\n"})
	apptest.Step(t, "a push killed right after its branch moved", func(t *testing.T) {
		srv := serveSSHBinary(t, bin, env)
		pushed := make(chan error, 1)
		go func() {
			_, err := pushTo(srv.sshAddr)
			pushed <- err
		}()
	wait:
		for refValue(t, repoDir, "refs/heads/main") == big {
			select {
			case err := <-pushed:
				if refValue(t, repoDir, "refs/heads/main") == big {
					t.Fatalf("the push ended without moving main: %v", err)
				}
				pushed <- err
				break wait
			case <-time.After(time.Millisecond):
			}
		}
		srv.kill()
		if err := <-pushed; err != nil {
			t.Logf("the push was cut off after main moved: %v", err)
		}
	})

	// The last start recovers every push left over.
	cfg := env.Config
	apptest.WithImmediatePushRecovery(&cfg)
	last := apptest.StartConfig(t, cfg)
	apptest.Step(t, "after the last start the pushes are recorded once and the repository is whole", func(t *testing.T) {
		if got := refValue(t, repoDir, "refs/heads/main"); got != next {
			t.Fatalf("main: %s, want %s", got, next)
		}
		if q := quarantines(repoDir); len(q) != 0 {
			t.Errorf("quarantined objects left: %v", q)
		}
		if out, err := exec.Command("git", "--git-dir", repoDir, "fsck", "--no-dangling").CombinedOutput(); err != nil {
			t.Errorf("git fsck: %v\n%s", err, out)
		}
		var logged int
		apptest.Must(t, "count the push log", last.Q().QueryRowContext(ctx, `SELECT COUNT(*) FROM push_log`).Scan(&logged))
		if logged != 0 {
			t.Errorf("%d pushes left in the push log", logged)
		}
		heads := map[string]int{}
		evs, _, err := last.Client(token).Activity.ListRepositoryEvents(ctx, "octo", "hello", &github.ListOptions{PerPage: 100})
		apptest.Must(t, "repository events", err)
		for _, e := range evs {
			if e.GetType() != "PushEvent" {
				continue
			}
			payload, err := e.ParsePayload()
			apptest.Must(t, "push payload", err)
			heads[payload.(*github.PushEvent).GetHead()]++
		}
		for _, c := range []string{base, big, next} {
			if heads[c] != 1 {
				t.Errorf("push of %s: %d PushEvents, want 1 (%v)", c, heads[c], heads)
			}
		}
	})
}

// refValue reads a reference in a bare repository as git stores it: its
// loose file, else packed-refs; "" when it has neither.
func refValue(t *testing.T, dir, name string) string {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
		return strings.TrimSpace(string(b))
	}
	packed, _ := os.ReadFile(filepath.Join(dir, "packed-refs"))
	for line := range strings.Lines(string(packed)) {
		if sha, ref, ok := strings.Cut(strings.TrimSpace(line), " "); ok && ref == name {
			return sha
		}
	}
	return ""
}
