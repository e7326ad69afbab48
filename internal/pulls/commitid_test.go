package pulls_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestReviewCommitIDNotInRepository: a review comment or a review whose
// commit_id names no commit of the repository is the platform's 422
// "commit_id is not part of the pull request" (a review comment's as a
// field object, a review's as a string, each operation's form), never a
// 500; nothing is recorded.
func TestReviewCommitIDNotInRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	p := newProject(t, env, "octo", "hello", "octo", token)
	head := p.commitOn("topic", "change", map[string]string{"app.txt": "one\ntwo\nthree\nfour\n"})
	if resp, b := env.DoJSON("POST", "/repos/octo/hello/pulls", token, `{"title":"t","head":"topic","base":"main"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("open: %d %s", resp.StatusCode, b)
	}
	for _, commit := range []string{strings.Repeat("1", 40), "zz", head[:7], "main"} {
		resp, b := env.DoJSON("POST", "/repos/octo/hello/pulls/1/comments", token,
			`{"body":"b","commit_id":"`+commit+`","path":"app.txt","line":4,"side":"RIGHT"}`)
		var got struct {
			Errors []struct{ Resource, Field, Code, Message string }
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &got) != nil || len(got.Errors) != 1 ||
			got.Errors[0] != (struct{ Resource, Field, Code, Message string }{"PullRequestReviewComment", "commit_id", "custom", "commit_id is not part of the pull request"}) {
			t.Errorf("comment on commit %q: %d %s", commit, resp.StatusCode, b)
		}
		resp, b = env.DoJSON("POST", "/repos/octo/hello/pulls/1/reviews", token, `{"body":"b","event":"COMMENT","commit_id":"`+commit+`"}`)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"errors":["commit_id is not part of the pull request"]`) {
			t.Errorf("review of commit %q: %d %s", commit, resp.StatusCode, b)
		}
	}
	for _, path := range []string{"/repos/octo/hello/pulls/1/comments", "/repos/octo/hello/pulls/1/reviews"} {
		if resp, b := env.Do("GET", path, token, nil); resp.StatusCode != http.StatusOK || string(b) != "[]\n" {
			t.Errorf("GET %s: %d %s, want none", path, resp.StatusCode, b)
		}
	}
	resp, b := env.DoJSON("POST", "/repos/octo/hello/pulls/1/comments", token, `{"body":"b","commit_id":"`+head+`","path":"app.txt","line":4,"side":"RIGHT"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("comment on the head: %d %s", resp.StatusCode, b)
	}
}
