package app_test

import (
	"regexp"
	"testing"

	"forgeapi/internal/apptest"
)

// documented401 are the operations whose description (the platform's
// OpenAPI: api.github.com, ghec for custom agents, ghes-3.19 for grants and
// authorizations) documents a 401. Every other route that needs
// credentials answers an anonymous caller 404, as the platform does for
// what it does not reveal.
var documented401 = map[string]bool{
	"GET /user":                              true,
	"POST /api/graphql":                      true, // not in the REST descriptions; the platform\'s GraphQL answers 401
	"GET /user/repos":                        true,
	"GET /notifications":                     true,
	"PUT /notifications":                     true,
	"GET /notifications/threads/{thread_id}": true,
	"GET /notifications/threads/{thread_id}/subscription":    true,
	"PUT /notifications/threads/{thread_id}/subscription":    true,
	"DELETE /notifications/threads/{thread_id}/subscription": true,
	"GET /user/orgs":                                               true,
	"PATCH /user":                                                  true,
	"GET /user/starred":                                            true,
	"GET /gists/starred":                                           true,
	"GET /user/subscriptions":                                      true,
	"GET /user/blocks":                                             true,
	"GET /user/blocks/{username}":                                  true,
	"PUT /user/blocks/{username}":                                  true,
	"DELETE /user/blocks/{username}":                               true,
	"GET /user/emails":                                             true,
	"POST /user/emails":                                            true,
	"DELETE /user/emails":                                          true,
	"PATCH /user/email/visibility":                                 true,
	"GET /user/public_emails":                                      true,
	"GET /user/followers":                                          true,
	"GET /user/following":                                          true,
	"GET /user/memberships/orgs":                                   true,
	"GET /user/repository_invitations":                             true,
	"POST /user/repos":                                             true,
	"GET /applications/grants":                                     true,
	"GET /applications/grants/{grant_id}":                          true,
	"DELETE /applications/grants/{grant_id}":                       true,
	"GET /authorizations":                                          true,
	"POST /authorizations":                                         true,
	"PUT /authorizations/clients/{client_id}":                      true,
	"GET /authorizations/{authorization_id}":                       true,
	"DELETE /authorizations/{authorization_id}":                    true,
	"GET /enterprises/{enterprise}/assistant/custom-agents":        true,
	"PUT /enterprises/{enterprise}/assistant/custom-agents/source": true,
	"PUT /user/starred/{owner}/{repo}":                             true,
	"DELETE /user/starred/{owner}/{repo}":                          true,
	"GET /user/starred/{owner}/{repo}":                             true,
	"PUT /user/following/{username}":                               true,
	"DELETE /user/following/{username}":                            true,
	"GET /user/following/{username}":                               true,
	"POST /app/installations/{installation_id}/access_tokens":      true,
	"GET /installation/repositories":                               true,
	"POST /applications/{client_id}/token/scoped":                  true,
	"GET /user/keys":                                               true,
	"POST /user/keys":                                              true,
	"GET /user/keys/{key_id}":                                      true,
	"DELETE /user/keys/{key_id}":                                   true,
	"GET /user/gpg_keys":                                           true,
	"POST /user/gpg_keys":                                          true,
	"GET /user/gpg_keys/{gpg_key_id}":                              true,
	"DELETE /user/gpg_keys/{gpg_key_id}":                           true,
	"GET /user/ssh_signing_keys":                                   true,
	"POST /user/ssh_signing_keys":                                  true,
	"GET /user/ssh_signing_keys/{ssh_signing_key_id}":              true,
	"DELETE /user/ssh_signing_keys/{ssh_signing_key_id}":           true,
	"GET /user/social_accounts":                                    true,
	"POST /user/social_accounts":                                   true,
	"DELETE /user/social_accounts":                                 true,
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}": true,
	// forgeapi's own runner protocol (docs/actions-settings.md), in no
	// description: a runner without its registration token is refused as
	// the OAuth client routes refuse wrong credentials.
	"POST /_runner/register": true,
	"POST /_runner/remove":   true,
}

var pathWildcard = regexp.MustCompile(`\{[^}]+\}`)

// TestAnonymousCallersGet401OnlyWhereDocumented calls every route that
// needs credentials without any, on existing targets, and wants 401 where
// the operation documents it and a JSON 404 elsewhere.
func TestAnonymousCallersGet401OnlyWhereDocumented(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octo")
	org := env.Org("acme", owner)
	env.Repo(owner, "hello")
	env.Enterprise("bigcorp", owner, org)
	values := map[string]string{"{owner}": "octo", "{repo}": "hello", "{org}": "acme", "{username}": "octo",
		"{enterprise}": "bigcorp"}
	checked := 0
	for _, rt := range env.App.Routes() {
		if rt.Auth.Public {
			continue
		}
		key := rt.Method + " " + rt.Pattern
		path := pathWildcard.ReplaceAllStringFunc(rt.Pattern, func(w string) string {
			if v, ok := values[w]; ok {
				return v
			}
			return "1"
		})
		resp, body := env.Do(rt.Method, path, "", nil)
		want := 404
		if documented401[key] {
			want = 401
		}
		if resp.StatusCode != want {
			t.Errorf("anonymous %s (%s): %d %s, want %d", key, path, resp.StatusCode, body, want)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d routes checked", checked)
	}
}
