package e2e_test

import "crypto/rand"

// randReader is crypto/rand's reader as a value.
type randReader struct{}

func (randReader) Read(p []byte) (int, error) { return rand.Read(p) }
