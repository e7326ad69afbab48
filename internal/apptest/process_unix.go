//go:build unix

package apptest

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of this machine has the id pid.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
