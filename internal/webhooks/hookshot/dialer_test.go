package hookshot

import (
	"errors"
	"testing"
)

// The socket hook re-checks the final address even if a caller bypassed
// resolution and filtering.
func TestDialerControlRefusesBlockedAddress(t *testing.T) {
	t.Parallel()
	d := &guardedDialer{allow: DefaultAllowList()}
	control := d.control("metadata.example")
	var refused *RefusedError
	if err := control(t.Context(), "tcp4", "169.254.169.254:80", nil); !errors.As(err, &refused) || refused.Class != ClassLinkLocal {
		t.Errorf("control(169.254.169.254) = %v, want a link-local refusal", err)
	}
	if err := control(t.Context(), "tcp6", "[::ffff:127.0.0.1]:80", nil); !errors.As(err, &refused) || refused.Class != ClassLoopback {
		t.Errorf("control(::ffff:127.0.0.1) = %v, want a loopback refusal", err)
	}
	if err := control(t.Context(), "tcp4", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control(public) = %v, want nil", err)
	}
}
