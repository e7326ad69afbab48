package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"
)

// The labels that tie a job's containers to the runner running it
// (Spec.Runner): RunnerLabel is a digest of the runner's name,
// ProcessLabel the process that ran the job (HOST/PID/START, START the
// process's start time in clock ticks since boot, so that a reused pid
// is not taken for it).
const (
	RunnerLabel  = "forgeapi.actions.runner"
	ProcessLabel = "forgeapi.actions.process"
)

// RunnerLabelValue is the RunnerLabel value of a runner's name
// (Spec.Runner).
func RunnerLabelValue(runner string) string {
	sum := sha256.Sum256([]byte(runner))
	return hex.EncodeToString(sum[:12])
}

// thisProcess is the ProcessLabel value of this process.
func thisProcess() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), processStart(os.Getpid()))
}

// processStart is the start time of the process (field 22 of
// /proc/PID/stat), "" when there is no such process (or no /proc).
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 { // the command's name may hold spaces
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 20 {
		return ""
	}
	return f[19] // fields from the state on: 3..; the start time is 22
}

// processGone reports whether the process a ProcessLabel value names
// ran on this host and no longer runs; a process of another host (a
// Docker daemon shared by several machines) is not judged.
func processGone(label string) bool {
	parts := strings.Split(label, "/")
	if len(parts) != 3 {
		return false
	}
	host, _ := os.Hostname()
	if parts[0] != host {
		return false
	}
	var pid int
	if _, err := fmt.Sscan(parts[1], &pid); err != nil {
		return false
	}
	return processStart(pid) != parts[2]
}

// RemoveLeftovers removes what jobs of the runner (its Spec.Runner) left
// in Docker when the process running them was killed: their containers
// (jobs, services), the volumes these mounted and the networks they were
// on, keeping those of processes that still run (another process of the
// same runner). A runner calls it when it starts. It returns how many
// containers it removed; an error when no Docker daemon answers.
func RemoveLeftovers(ctx context.Context, runner string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return removeWhere(ctx, RunnerLabel+"="+RunnerLabelValue(runner), func(labels map[string]string) bool {
		return !processGone(labels[ProcessLabel])
	})
}
