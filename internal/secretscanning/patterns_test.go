package secretscanning

import (
	"testing"

	"forgeapi/internal/auth"
)

// TestScan finds each pattern's secrets with their places, and leaves out
// look-alikes: parts of longer words, forgeapi tokens with a bad
// checksum, binary content.
func TestScan(t *testing.T) {
	own := auth.NewToken(auth.KindFineGrained)
	bad := own[:len(own)-1] + map[bool]string{true: "A", false: "B"}[own[len(own)-1] != 'A']
	text := "line one\n  key = AKIAIOSFODNN7EXAMPLE\nx" + own + " " + bad + "\nsk_live_abcdefghijklmnopqrstuvwx1\nAKIAIOSFODNN7EXAMPLEX\n"
	got := Scan([]byte(text))
	want := []Match{
		{Type: "aws_access_key_id", Secret: "AKIAIOSFODNN7EXAMPLE", StartLine: 2, EndLine: 2, StartColumn: 9, EndColumn: 29},
		{Type: "stripe_api_key", Secret: "sk_live_abcdefghijklmnopqrstuvwx1", StartLine: 4, EndLine: 4, StartColumn: 1, EndColumn: 34},
	}
	if len(got) != len(want) {
		t.Fatalf("matches: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("match %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if m := Scan([]byte("t=" + own)); len(m) != 1 || m[0].Type != "forgeapi_fine_grained_personal_access_token" || m[0].StartColumn != 3 {
		t.Fatalf("own token: %+v", m)
	}
	if m := Scan([]byte("\x00AKIAIOSFODNN7EXAMPLE")); len(m) != 0 {
		t.Fatalf("binary: %+v", m)
	}
	for _, p := range Patterns {
		if p.Type == "" || p.DisplayName == "" {
			t.Fatalf("pattern without names: %+v", p)
		}
	}
}
