// Package dockertest gives tests of jobs run in containers a Docker
// daemon and a job image made on this machine (no registry is reached):
// busybox (its applets, and a bash that is its sh), node when the host
// has it, and a marker file and /etc/os-release only the image has; its
// default command serves ServiceText on port 8080.
// Tests skip when no daemon answers.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Image is the test image's tag; its version changes when its content does.
const Image = "forgeapi-actions-test:2"

// Marker is the path of a file only the image has; its content is MarkerText.
const (
	Marker     = "/forgeapi-image-marker"
	MarkerText = "made-for-forgeapi-tests"
)

// ServiceText is what the image's default command (a web server on port
// 8080, for services:) serves at /.
const ServiceText = "served-by-the-service"

// OSRelease is the image's /etc/os-release.
const OSRelease = "ID=forgeapi-test\nNAME=\"forgeapi test image\"\n"

// Available reports whether a Docker daemon answers the docker client.
func Available() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").Run() == nil
}

// Need skips the test when no Docker daemon answers.
func Need(t testing.TB) {
	t.Helper()
	if !Available() {
		t.Skip("no Docker daemon answers (docker info)")
	}
}

// JobImage skips the test when no Docker daemon answers, else returns the
// test image's tag, importing the image first when the daemon lacks it
// (once: later runs find it by its tag).
func JobImage(t testing.TB) string {
	t.Helper()
	Need(t)
	if exec.Command("docker", "image", "inspect", Image).Run() == nil {
		return Image
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox (busybox-static) is missing: the test image is made of it")
	}
	var buf bytes.Buffer
	if err := writeRootfs(&buf, busybox); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker", "import", "--change", `CMD ["/bin/httpd", "-f", "-p", "8080", "-h", "/www"]`, "-", Image)
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
	return Image
}

// writeRootfs writes the image's file tree as a tar.
func writeRootfs(w io.Writer, busybox string) error {
	tw := tar.NewWriter(w)
	for _, d := range []string{"bin", "etc", "tmp", "root", "usr", "usr/bin", "var", "var/run", "www"} {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: mode}); err != nil {
			return err
		}
	}
	if err := addFile(tw, busybox, "bin/busybox"); err != nil {
		return err
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return err
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" || strings.Contains(applet, "[") {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}); err != nil {
			return err
		}
	}
	files := map[string]string{
		"bin/bash": "#!/bin/sh\n# bash for act's default shell: busybox's sh, without bash's own options\n" +
			"while [ \"$#\" -gt 0 ]; do case \"$1\" in --noprofile|--norc) shift ;; *) break ;; esac; done\nexec /bin/sh \"$@\"\n",
		"etc/os-release":                OSRelease,
		"www/index.html":                ServiceText + "\n",
		"etc/passwd":                    "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":                     "root:x:0:\n",
		strings.TrimPrefix(Marker, "/"): MarkerText + "\n",
	}
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body))}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return err
		}
	}
	if err := addNode(tw); err != nil {
		return err
	}
	return tw.Close()
}

// addNode adds the host's node and the libraries it loads (at their
// paths), when the host has node.
func addNode(tw *tar.Writer) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil
	}
	node, err = filepath.EvalSymlinks(node)
	if err != nil {
		return nil
	}
	out, err := exec.Command("ldd", node).Output()
	if err != nil {
		return nil // a static node, or no ldd: left out
	}
	paths := []string{node}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				paths = append(paths, f)
			}
		}
	}
	dirs := map[string]bool{"bin": true, "etc": true, "tmp": true, "root": true, "usr": true, "usr/bin": true, "var": true, "var/run": true}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		for _, name := range []string{strings.TrimPrefix(p, "/"), strings.TrimPrefix(real, "/")} {
			if err := mkdirs(tw, dirs, filepath.Dir(name)); err != nil {
				return err
			}
		}
		if err := addFile(tw, real, strings.TrimPrefix(real, "/")); err != nil {
			return err
		}
		if real != p {
			if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/"), Typeflag: tar.TypeSymlink, Linkname: real, Mode: 0o777}); err != nil {
				return err
			}
		}
	}
	if node != "/usr/bin/node" {
		return tw.WriteHeader(&tar.Header{Name: "usr/bin/node", Typeflag: tar.TypeSymlink, Linkname: node, Mode: 0o777})
	}
	return nil
}

// mkdirs writes the directory and its parents not written yet.
func mkdirs(tw *tar.Writer, done map[string]bool, dir string) error {
	if dir == "." || dir == "/" || dir == "" || done[dir] {
		return nil
	}
	if err := mkdirs(tw, done, filepath.Dir(dir)); err != nil {
		return err
	}
	done[dir] = true
	return tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755})
}

// addFile copies a host file into the tar as name.
func addFile(tw *tar.Writer, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: int64(st.Mode().Perm()), Size: st.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// Leftovers returns the ids of the containers (running or not) of the
// workflow named workflow (act names them act-WORKFLOW-JOB-...) carrying
// the label.
func Leftovers(t testing.TB, label, workflow string) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+label, "--filter", "name=act-"+workflow).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// Running returns the ids of the running containers of the workflow
// named workflow carrying the label.
func Running(t testing.TB, label, workflow string) []string {
	out, err := exec.Command("docker", "ps", "-q", "--filter", "label="+label, "--filter", "name=act-"+workflow).Output()
	if err != nil {
		t.Errorf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// Dies follows the daemon's events from now on and returns a function
// that waits (up to 30 s) for the first container of the workflow named
// workflow carrying the label to stop and returns when it stopped, as
// the daemon saw it.
func Dies(t testing.TB, label, workflow string) func() time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, "docker", "events", "--filter", "label="+label, "--filter", "event=die",
		"--format", "{{.TimeNano}} {{.Actor.Attributes.name}}")
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		t.Fatalf("docker events: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // docker events subscribes
	return func() time.Time {
		defer func() {
			cancel()
			_ = cmd.Wait()
		}()
		for {
			var nanos int64
			var name string
			if _, err := fmt.Fscan(out, &nanos, &name); err != nil {
				t.Errorf("no container of %s died: %v", workflow, err)
				return time.Now()
			}
			if strings.HasPrefix(name, "act-"+workflow) {
				return time.Unix(0, nanos)
			}
		}
	}
}
