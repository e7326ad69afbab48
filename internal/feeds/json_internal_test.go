package feeds

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestEventsJSONAppender checks that a page renders through AppendJSON
// exactly as encoding/json renders it: events with and without a
// repository and an organization, strings that need escaping, payloads
// with spaces, HTML and non-ASCII characters, and an empty page.
func TestEventsJSONAppender(t *testing.T) {
	t.Parallel()
	repo, org := int64(7), int64(9)
	at := time.Date(2026, 5, 4, 3, 2, 1, 500, time.FixedZone("X", 3600))
	rows := []row{
		{ID: 1, Type: "PushEvent", ActorID: 3, ActorLogin: "octocat", RepoID: &repo, RepoName: "acme/widgets", OrgID: &org,
			OrgLogin: "acme", Public: true, Payload: `{"ref":"refs/heads/main","commits":[{"message":"fix <b>&</b> \"bug\" é\u2028"}]}`, CreatedAt: at},
		{ID: 2, Type: "WatchEvent", ActorID: 4, ActorLogin: "dependabot[bot]", Payload: "{ \"action\" : \"started\" }\n", CreatedAt: at},
		{ID: 3, Type: "Weird\"Type\x01", ActorID: 5, ActorLogin: "é<>&", RepoID: &repo, RepoName: "a/b", Payload: "", CreatedAt: time.Time{}},
	}
	for name, page := range map[string]eventsJSON{"events": toJSON("http://127.0.0.1:8080", rows), "empty": toJSON("http://x", nil)} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode([]eventJSON(page)); err != nil {
			t.Fatal(err)
		}
		got := append(page.AppendJSON(nil), '\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want.Bytes())
		}
	}
}
