//go:build unix

package apptest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the process has used, for
// benchmarks that report CPU per operation.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ChildrenCPU is the CPU time (user and system) of the process's child
// processes that ended and were waited for (git commands, hooks), which
// ProcessCPU leaves out.
func ChildrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
