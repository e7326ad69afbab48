package hookshot

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// TestStoredHeadersReadBackAsSent: for every header name set, with and
// without a secret and credentials, the stored headers leave out exactly
// the identity sets the delivery carried, and adding them back from the
// identity gives the headers as the log shows them. An identity that
// differs in one value implies no set, and the headers are stored whole.
func TestStoredHeadersReadBackAsSent(t *testing.T) {
	base := Request{Event: "repository", DeliveryGUID: "0f2c1e40-6c1b-11ef-9f3a-5b1d1e0c9a11", HookID: 12,
		TargetID: 3, TargetType: TargetOrganization, Payload: []byte(`{"a":1}`)}
	for names, want := range map[HeaderNames]IdentitySets{
		HeaderNamesBoth:     ServiceIdentity | PlatformIdentity,
		HeaderNamesService:  ServiceIdentity,
		HeaderNamesPlatform: PlatformIdentity,
	} {
		s := &Sender{cfg: Config{HeaderNames: names, Version: DefaultVersion}}
		for _, req := range []Request{base, withSecretAndCredentials(base)} {
			h := s.headers(req, "application/json", req.Payload)
			b, implied := h.AppendStoredJSON(nil, identityOf(req))
			if implied != want {
				t.Errorf("%s: implied %b, want %b", names, implied, want)
			}
			for _, set := range identitySets {
				for _, name := range set.names {
					if strings.Contains(string(b), `"`+name+`"`) {
						t.Errorf("%s: stored headers keep %s: %s", names, name, b)
					}
				}
			}
			if got := readBack(t, b, implied, identityOf(req)); !maps.Equal(got, h.Map()) {
				t.Errorf("%s: read back %v\nlogged as %v", names, got, h.Map())
			}

			other := identityOf(req)
			other.TargetID++
			whole, implied := h.AppendStoredJSON(nil, other)
			if implied != 0 {
				t.Errorf("%s: an identity of another target implied %b", names, implied)
			}
			if got := readBack(t, whole, implied, other); !maps.Equal(got, h.Map()) {
				t.Errorf("%s: stored whole, read back %v\nlogged as %v", names, got, h.Map())
			}
		}
	}
}

// identityOf is the identity req's headers are sent with.
func identityOf(req Request) Identity {
	return Identity{DeliveryGUID: req.DeliveryGUID, Event: req.Event, HookID: req.HookID, TargetID: req.TargetID,
		TargetType: req.TargetType}
}

func withSecretAndCredentials(r Request) Request {
	r.Secret, r.Username, r.Password = "s3cret", "u", "p"
	return r
}

// readBack is the log's map of stored headers with the implied sets added.
func readBack(t *testing.T, stored []byte, implied IdentitySets, id Identity) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(stored, &m); err != nil {
		t.Fatalf("%s: %v", stored, err)
	}
	AddIdentity(m, implied, id)
	return m
}
