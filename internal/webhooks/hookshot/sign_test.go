package hookshot

import (
	"errors"
	"testing"

	"github.com/google/go-github/v92/github"
)

// The platform's documented test vector for webhook signatures.
func TestSignKnownVector(t *testing.T) {
	t.Parallel()
	body := []byte("Hello, World!")
	sigs, ok := Sign(body, testSecret)
	if !ok {
		t.Fatal("Sign with a secret reported no signatures")
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
	if sigs, ok := Sign([]byte("x"), ""); ok || sigs != (Signatures{}) {
		t.Errorf("Sign without secret = %+v, %v", sigs, ok)
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
