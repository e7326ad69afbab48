package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/testwait"
)

func TestGitProcessesFindsGitRunningInTheDataDirectory(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	other := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", data).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	cmd := exec.Command("git", "cat-file", "--batch") // waits for its standard input
	cmd.Dir = data
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	found := func(dir string) bool {
		return slices.ContainsFunc(gitProcesses(dir), func(p string) bool {
			return strings.HasPrefix(p, strconv.Itoa(pid)+": ")
		})
	}
	testwait.For(t, fmt.Sprintf("git process %d to be reported in %s", pid, data), func() error {
		if !found(data) {
			return fmt.Errorf("reported: %v", gitProcesses(data))
		}
		return nil
	})
	if found(other) || found(filepath.Join(data, "elsewhere")) {
		t.Errorf("git process %d reported for a directory it does not use", pid)
	}
	stdin.Close()
	_ = cmd.Wait()
	if found(data) {
		t.Errorf("git process %d reported after it ended", pid)
	}
}
