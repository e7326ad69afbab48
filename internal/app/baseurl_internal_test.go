package app

import "testing"

// TestPublicBaseURL checks what --base-url may be and the form url fields
// get: the scheme's default port and a trailing slash dropped, anything
// that would render unusable links refused.
func TestPublicBaseURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://forge.example":             "https://forge.example",
		"https://forge.example:443/":        "https://forge.example",
		"https://forge.example:443/api/v3/": "https://forge.example/api/v3",
		"http://forge.example:80":           "http://forge.example",
		"http://forge.example:443":          "http://forge.example:443",
		"https://forge.example:8443":        "https://forge.example:8443",
		"http://127.0.0.1:8080":             "http://127.0.0.1:8080",
		"https://[2001:db8::7]:443":         "https://[2001:db8::7]",
		"http://[::]:8080":                  "http://[::]:8080",
	} {
		if got, err := PublicBaseURL(raw); err != nil || got != want {
			t.Errorf("PublicBaseURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"forge.example", "forge.example:8080", "ftp://forge.example", "https://", "https://:443",
		"https://forge.example/?a=b", "https://forge.example/#top", "https://user:pw@forge.example", "https://forge.example/?"} {
		if got, err := PublicBaseURL(raw); err == nil {
			t.Errorf("PublicBaseURL(%q) = %q, want an error", raw, got)
		}
	}
}
