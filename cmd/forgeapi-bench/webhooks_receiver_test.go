package main

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// The receiver knows a repository event by the repository's own
// description, not the one before it in changes nor an organization's,
// a push by its after SHA, and no other event.
func TestEventKey(t *testing.T) {
	repository := []byte(`{"action":"edited","changes":{"description":{"from":"bench-1"}},` +
		`"repository":{"id":1,"owner":{"login":"bench","description":"an owner"},"description":"bench-2","topics":[]},` +
		`"organization":{"login":"o","description":"an organization"}}`)
	sent, err := os.ReadFile("testdata/repository-edited.json") // as forgeapi sent it
	if err != nil {
		t.Fatal(err)
	}
	push := []byte(`{"ref":"refs/heads/main","before":"` + strings.Repeat("0", 40) + `","after":"0123abcd","repository":{"description":"r"}}`)
	for _, c := range []struct {
		event   string
		payload []byte
		want    string
	}{
		{"repository", repository, "bench-2"},
		{"repository", sent, "bench-1387"},
		{"push", push, "0123abcd"},
		{"ping", []byte(`{"zen":"z","hook_id":1}`), ""},
		{"issues", repository, ""},
		{"repository", []byte(`{"repository":{"description":null}}`), ""},
	} {
		if got := eventKey(c.event, c.payload); got != c.want {
			t.Errorf("eventKey(%s, %s) = %q, want %q", c.event, c.payload, got, c.want)
		}
	}
}

// The receiver takes a delivery signed with its secret and refuses one
// whose body, signature or secret differ, or that is signed with SHA-1
// alone; its reused HMACs and buffers carry nothing from one delivery
// to the next.
func TestReceiverChecksTheSignature(t *testing.T) {
	rcv := newReceiver("bench-secret")
	hookURL, stop, err := serveReceiver(rcv)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	body := barePayload("sig-1")
	good := "sha256=" + hexHMAC(sha256.New, []byte("bench-secret"), body)
	for _, c := range []struct {
		name, header, signature string
		body                    []byte
		want                    int
	}{
		{"signed", "X-Hub-Signature-256", good, body, http.StatusOK},
		{"body changed", "X-Hub-Signature-256", good, barePayload("sig-2"), http.StatusBadRequest},
		{"other secret", "X-Hub-Signature-256", "sha256=" + hexHMAC(sha256.New, []byte("other"), body), body, http.StatusBadRequest},
		{"SHA-1 alone", "X-Hub-Signature", "sha1=" + hexHMAC(sha1.New, []byte("bench-secret"), body), body, http.StatusBadRequest},
		{"not hex", "X-Hub-Signature-256", "sha256=" + strings.Repeat("zz", 32), body, http.StatusBadRequest},
		{"short", "X-Hub-Signature-256", good[:len(good)-2], body, http.StatusBadRequest},
		{"signed again", "X-Hub-Signature-256", good, body, http.StatusOK},
	} {
		req, err := http.NewRequest("POST", hookURL+"/0", bytes.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Service-Event", "repository")
		req.Header.Set(c.header, c.signature)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	if n := rcv.badSignatures.Load(); n != 5 {
		t.Errorf("%d bad signatures counted, want 5", n)
	}
}

// BenchmarkEventKey compares the receiver's key lookup with decoding the
// whole payload, on the payload of a repository event forgeapi sent
// (testdata) and on the flat loop's one: why the receiver looks the key
// up rather than decoding.
func BenchmarkEventKey(b *testing.B) {
	forgeapi, err := os.ReadFile("testdata/repository-edited.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name    string
		payload []byte
	}{{"forgeapi", forgeapi}, {"flat", barePayload("bare-1")}} {
		b.Run("lookup/"+p.name, func(b *testing.B) {
			for b.Loop() {
				if eventKey("repository", p.payload) == "" {
					b.Fatal("no key")
				}
			}
		})
		b.Run("decode/"+p.name, func(b *testing.B) {
			for b.Loop() {
				var body struct {
					Repository struct{ Description string } `json:"repository"`
				}
				if err := json.Unmarshal(p.payload, &body); err != nil || body.Repository.Description == "" {
					b.Fatal("no key", err)
				}
			}
		})
	}
}
