//go:build !unix

package store

import "os"

// lockExclusive takes no lock where flock is not available: the server
// does not know whether it is the only one.
func lockExclusive(*os.File) (locked, supported bool, err error) { return false, false, nil }
