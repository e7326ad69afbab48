package e2e_test

import (
	"testing"

	"forgeapi/internal/rulesets"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"refs/heads/*", "refs/heads/main", true},
		{"refs/heads/*", "refs/heads/a/b", false},
		{"refs/heads/**", "refs/heads/a/b", true},
		{"release-?", "release-1", true},
		{"release-?", "release-10", false},
		{"a.b", "axb", false},
		{"secrets/**", "secrets/x/y", true},
	} {
		if got := rulesets.Match(c.pattern, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pattern, c.name, got)
		}
	}
}
