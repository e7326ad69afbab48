package pulls

import (
	"slices"
	"testing"
)

func TestCodeownersRules(t *testing.T) {
	t.Parallel()
	rules := parseCodeowners("# owners\n* @octo\n*.go @acme/gophers # Go\n/docs/ @carol\napps/**/test @bob\nREADME.md\n")
	for file, want := range map[string][]string{
		"main.go":             {"acme/gophers"},
		"cmd/x/main.go":       {"acme/gophers"},
		"docs/a.md":           {"carol"},
		"src/docs/a.md":       {"octo"},
		"apps/web/test/x.txt": {"bob"},
		"apps/test/y":         {"bob"},
		"README.md":           nil,
		"other.txt":           {"octo"},
	} {
		if got := owners(rules, file); !slices.Equal(got, want) {
			t.Errorf("owners of %s: %v, want %v", file, got, want)
		}
	}
}
