package docs_test

import (
	"slices"
	"testing"

	"forgeapi/docs"
)

// TestLinkedPagesExist keeps the page constants that code links to in
// step with the files.
func TestLinkedPagesExist(t *testing.T) {
	t.Parallel()
	for _, name := range []string{docs.Index, docs.API, docs.GitHosting, docs.Webhooks, docs.EventFeeds,
		docs.OAuth, docs.CustomAgents, docs.ArtifactMetadata, docs.DependencyReview, docs.Migrations,
		docs.Operations, docs.Performance, docs.Permissions} {
		if _, ok := docs.Source(name); !ok {
			t.Errorf("page %q has no %s.md", name, name)
		}
		if !slices.Contains(docs.Pages(), name) {
			t.Errorf("Pages() lacks %q", name)
		}
	}
	for _, bad := range []string{"", "../README", "sub/page", "nonexistent"} {
		if _, ok := docs.Source(bad); ok {
			t.Errorf("Source(%q) found a page", bad)
		}
	}
}
