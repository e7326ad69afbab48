package webhooks_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// octokitSummary is what testdata/node/octokit-hooks.mjs prints.
type octokitSummary struct {
	Failures         []string `json:"failures"`
	Error            string   `json:"error"`
	Logged           int      `json:"logged"`
	Pages            int      `json:"pages"`
	LoggedGUIDs      []string `json:"loggedGUIDs"`
	ReceivedGUIDs    []string `json:"receivedGUIDs"`
	RedeliveryStatus int      `json:"redeliveryStatus"`
	Redelivered      int      `json:"redelivered"`
	FeedTypes        []string `json:"feedTypes"`
	PollInterval     string   `json:"pollInterval"`
	PollStatus       int      `json:"pollStatus"`
	RequestID        string   `json:"requestID"`
	UnknownIDs       int      `json:"unknownIDs"`
	RequestsLogged   int      `json:"requestsLogged"`
}

// TestOctokitDrivesHooksDeliveriesAndFeeds runs octokit.js (@octokit/rest
// and @octokit/webhooks, pinned in testdata/node) against the server: a
// hook made with octokit receives signed deliveries that
// @octokit/webhooks verifies and routes by event name; octokit pages
// through the delivery log, redelivers, and polls a feed with
// If-None-Match to a 304; its request log names every request's id.
func TestOctokitDrivesHooksDeliveriesAndFeeds(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/rest")
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "octokit-hooks.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FORGEAPI_URL="+env.URL+"/api/v3", "FORGEAPI_TOKEN="+token, "OWNER=octo", "REPO=widgets")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node octokit-hooks.mjs: %v\n%s", err, out)
	}
	t.Logf("octokit summary: %s", out)
	var s octokitSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if s.Error != "" || len(s.Failures) > 0 {
		t.Fatalf("octokit: error %q, receiver failures %v", s.Error, s.Failures)
	}
	if s.Logged != 6 || s.Pages != 3 || !slices.Equal(s.LoggedGUIDs, s.ReceivedGUIDs) {
		t.Errorf("delivery log: %d deliveries on %d pages, GUIDs %v; received %v; want 6 on 3 pages, the same GUIDs",
			s.Logged, s.Pages, s.LoggedGUIDs, s.ReceivedGUIDs)
	}
	if s.RedeliveryStatus != 202 || s.Redelivered != 1 {
		t.Errorf("redelivery: status %d, %d logged redeliveries, want 202 and 1", s.RedeliveryStatus, s.Redelivered)
	}
	if !slices.Contains(s.FeedTypes, "WatchEvent") || s.PollInterval == "" || s.PollStatus != 304 {
		t.Errorf("feed: types %v, X-Poll-Interval %q, poll with the ETag %d; want a WatchEvent, an interval, 304",
			s.FeedTypes, s.PollInterval, s.PollStatus)
	}
	if s.RequestID == "" || s.UnknownIDs != 0 || s.RequestsLogged == 0 {
		t.Errorf("request ids: X-GitHub-Request-Id %q, %d of %d logged requests with id UNKNOWN", s.RequestID, s.UnknownIDs, s.RequestsLogged)
	}
}
