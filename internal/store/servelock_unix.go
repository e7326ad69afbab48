//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockExclusive takes an exclusive flock on f without waiting: locked is
// false when another open file holds it.
func lockExclusive(f *os.File) (locked, supported bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, true, nil
	case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.ENOLCK):
		return false, false, nil
	}
	return false, true, err
}
