package auth

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestSHA256SumOfString(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 40, 127, 128, 129, 300} {
		s := strings.Repeat("t", n)
		if sha256Sum(s) != sha256.Sum256([]byte(s)) {
			t.Errorf("sha256Sum of %d bytes differs", n)
		}
	}
}
