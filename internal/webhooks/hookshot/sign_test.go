package hookshot

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"
)

// The platform's documented test vector for webhook signatures.
func TestSignKnownVector(t *testing.T) {
	t.Parallel()
	body := []byte("Hello, World!")
	var s signer
	sigs, ok := s.sign(body, testSecret)
	if !ok {
		t.Fatal("signing with a secret reported no signatures")
	}
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if sigs.SHA256 != want {
		t.Errorf("SHA256 = %s, want %s", sigs.SHA256, want)
	}
	for _, sig := range []string{sigs.SHA256, sigs.SHA1} {
		if err := github.ValidateSignature(sig, body, []byte(testSecret)); err != nil {
			t.Errorf("%s: %v", sig, err)
		}
	}
}

func TestSignWithoutSecret(t *testing.T) {
	t.Parallel()
	var s signer
	if sigs, ok := s.sign([]byte("x"), ""); ok || sigs != (Signatures{}) {
		t.Errorf("signing without secret = %+v, %v", sigs, ok)
	}
}

// TestSignerReusesItsHMACsExactly signs with a signer's reused HMACs from
// many goroutines, bodies and secrets (more secrets than it keeps, so it
// starts over) and checks each signature against ones made with fresh
// HMACs: a
// reused HMAC that was not reset, or one of another secret, would differ.
func TestSignerReusesItsHMACsExactly(t *testing.T) {
	t.Parallel()
	var s signer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range maxSignerKeys/4 + 50 {
				secret := fmt.Sprintf("secret-%d", (i*8+g)%(maxSignerKeys+100))
				if i%3 == 0 {
					secret = "shared"
				}
				body := []byte(strings.Repeat(fmt.Sprint(g, i), i%200+1))
				got, ok := s.sign(body, secret)
				want := freshSignatures(body, secret)
				if !ok || got != want {
					t.Errorf("signer = %+v, %v, want %+v", got, ok, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if sigs, ok := s.sign([]byte("x"), ""); ok || sigs != (Signatures{}) {
		t.Errorf("signer without secret = %+v, %v", sigs, ok)
	}
}

func TestEncodeBodyRejectsUnknownContentType(t *testing.T) {
	t.Parallel()
	_, _, err := EncodeBody("xml", testPayload)
	var unsupported *UnsupportedContentTypeError
	if !errors.As(err, &unsupported) || unsupported.ContentType != "xml" {
		t.Errorf("err = %v, want *UnsupportedContentTypeError", err)
	}
}

// BenchmarkSign signs a repository event's payload (5.7 KB) with fresh
// HMACs and with a signer's reused ones, as the Sender does:
//
//	go test ./internal/webhooks/hookshot -run '^$' -bench Sign -benchmem
func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat("x", 5693))
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			freshSignatures(body, testSecret)
		}
	})
	b.Run("signer", func(b *testing.B) {
		b.ReportAllocs()
		var s signer
		for b.Loop() {
			s.sign(body, testSecret)
		}
	})
}

// freshSignatures signs body with HMACs made for the call, the reference
// the signer's reused ones are checked and measured against.
func freshSignatures(body []byte, secret string) Signatures {
	return Signatures{
		SHA256: signature("sha256=", hmac.New(sha256.New, []byte(secret)), body),
		SHA1:   signature("sha1=", hmac.New(sha1.New, []byte(secret)), body),
	}
}
