package app

import (
	"errors"
	"slices"
	"testing"
)

// TestClosersCloseOnceLastFirstOnError: a constructor that fails closes
// what it opened, each once, the last opened first; one that succeeds
// closes nothing.
func TestClosersCloseOnceLastFirstOnError(t *testing.T) {
	t.Parallel()
	var closed []string
	construct := func(fail bool) (err error) {
		var opened closers
		defer opened.closeOnError(&err)
		for _, name := range []string{"store", "listener"} {
			opened.add(func() error { closed = append(closed, name); return errors.New("close " + name) })
		}
		if fail {
			return errors.New("failed")
		}
		return nil
	}
	if err := construct(false); err != nil || closed != nil {
		t.Fatalf("success: err %v, closed %v", err, closed)
	}
	if err := construct(true); err == nil || err.Error() != "failed" || !slices.Equal(closed, []string{"listener", "store"}) {
		t.Fatalf("failure: err %v, closed %v, want listener then store", err, closed)
	}
}
