package repository_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// sshBenchServer is an in-process server serving git over SSH, with a
// user (octo) whose key the OpenSSH client uses.
type sshBenchServer struct {
	env    *apptest.Env
	octo   *accounts.Account
	client sshPusher
	addr   string
}

func startSSHBench(b *testing.B) *sshBenchServer {
	b.Helper()
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("needs the OpenSSH client's %s: %v", tool, err)
		}
	}
	env := apptest.Start(b, apptest.WithSSH())
	octo := env.User("octo")
	key := filepath.Join(b.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		b.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	apptest.Must(b, "public key", err)
	_, _, err = env.Client(env.Token(octo, "admin:public_key")).Users.CreateKey(apptest.Ctx(),
		github.CreateUserKeyRequest{Title: github.Ptr("bench"), Key: string(pub)})
	apptest.Must(b, "add the key", err)
	return &sshBenchServer{env: env, octo: octo, client: sshPusher{key: key, knownHosts: filepath.Join(b.TempDir(), "known_hosts")},
		addr: env.Main.SSHAddr()}
}

// BenchmarkCloneOverSSH clones (git clone --bare, protocol v2) a
// repository of 100 MiB of incompressible files, fully packed, through
// forgeapi's SSH server with the OpenSSH client (key authentication,
// authorization, git-upload-pack), and the same bare repository through
// the reference: git's ssh transport with GIT_SSH_COMMAND running
// git-upload-pack directly on it (the machine has no sshd to clone over
// `ssh localhost`, so the reference has no SSH at all: no encryption, no
// handshake). MB/s compares their throughput; the target is forgeapi at
// 0.8 of the reference or more.
func BenchmarkCloneOverSSH(b *testing.B) {
	s := startSSHBench(b)
	dir := s.env.App.Repos.GitDir(s.env.Repo(s.octo, "big").ID)
	const files, fileSize = 25, 4 << 20
	work := apptest.WorkTree(b, nil)
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	buf := make([]byte, fileSize)
	for i := range files {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		apptest.Must(b, "write", os.WriteFile(filepath.Join(work, fmt.Sprintf("blob%02d.bin", i)), buf, 0o644))
	}
	apptest.Git(b, work, "add", ".")
	apptest.Git(b, work, "commit", "-q", "-m", "100 MiB")
	apptest.Git(b, work, "push", "-q", "file://"+dir, "HEAD:refs/heads/main")
	apptest.Git(b, dir, "repack", "-a", "-d", "-q")
	size := dirSize(b, filepath.Join(dir, "objects"))
	b.Logf("repository: %.1f MiB of objects", float64(size)/(1<<20))

	clone := func(b *testing.B, url string, env ...string) {
		b.Helper()
		dst := filepath.Join(b.TempDir(), "clone.git")
		cmd := exec.Command("git", "-c", "protocol.version=2", "-c", "ssh.variant=ssh", "clone", "--bare", "-q", url, dst)
		cmd.Env = append(apptest.GitEnv(b.TempDir()), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("clone %s: %v\n%s", url, err, out)
		}
		b.StopTimer()
		_ = os.RemoveAll(dst)
		b.StartTimer()
	}
	b.Run("reference-upload-pack", func(b *testing.B) {
		// git runs GIT_SSH_COMMAND [options] HOST "git-upload-pack '/path'"
		// with GIT_PROTOCOL in its environment: the script runs the last
		// argument, the command, as sshd would.
		script := filepath.Join(b.TempDir(), "direct-ssh")
		apptest.Must(b, "script", os.WriteFile(script, []byte("#!/bin/sh\nfor last; do :; done\nexec sh -c \"$last\"\n"), 0o755))
		b.SetBytes(size)
		for b.Loop() {
			clone(b, "ssh://localhost"+dir, "GIT_SSH_COMMAND="+script)
		}
	})
	b.Run("forgeapi-ssh", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			clone(b, "ssh://git@"+s.addr+"/octo/big.git", "GIT_SSH_COMMAND="+s.client.command(s.addr))
		}
	})
}

// BenchmarkSSHSessionServerCPU runs `ssh -T git@HOST` (OpenSSH, another
// process) against the in-process server: a new connection's handshake,
// the user's key authentication (the key looked up in the database) and
// the greeting. server-cpu-ns/op is the test process's CPU per
// connection, the server's alone (the client is a child process); the
// target is under 20 ms.
func BenchmarkSSHSessionServerCPU(b *testing.B) {
	s := startSSHBench(b)
	args := append(strings.Fields(s.client.command(s.addr))[1:], "-T", "git@127.0.0.1")
	greet := func() {
		out, _ := exec.Command("ssh", args...).CombinedOutput() // exit status 1: no shell, as the platform's
		if !strings.Contains(string(out), "Hi octo!") {
			b.Fatalf("ssh -T: %s", out)
		}
	}
	greet() // the host key accepted once
	cpu := apptest.ProcessCPU()
	for b.Loop() {
		greet()
	}
	b.ReportMetric(float64((apptest.ProcessCPU()-cpu).Nanoseconds())/float64(b.N), "server-cpu-ns/op")
}

// dirSize is the size of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	})
	apptest.Must(b, "size", err)
	return n
}
