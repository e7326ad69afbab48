package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

type targetKey string

// targetsGuard resolves three values on /three, one more than the
// request's context keeps in place, then another for the first key; one
// on /one.
type targetsGuard struct{}

func (targetsGuard) Check(r *http.Request, _ *auth.Principal, _ auth.Rule) (context.Context, error) {
	ctx := r.Context()
	if r.URL.Path == "/one" {
		return httpapi.WithTargetValue(ctx, targetKey("a"), "guard-a"), nil
	}
	for _, k := range []targetKey{"a", "b", "c"} {
		ctx = httpapi.WithTargetValue(ctx, k, "guard-"+string(k))
	}
	return httpapi.WithTargetValue(ctx, targetKey("a"), "guard-a2"), nil
}

// The guard's values reach the handler, the latest of a key winning,
// also past the context's own room; once the guard is done a handler's
// WithTargetValue makes a new context and leaves the request's alone.
func TestGuardValuesReachTheHandler(t *testing.T) {
	t.Parallel()
	db := apptest.OpenStore(t)
	handle := func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		got := fmt.Sprintf("%v %v %v", ctx.Value(targetKey("a")), ctx.Value(targetKey("b")), ctx.Value(targetKey("c")))
		later := httpapi.WithTargetValue(ctx, targetKey("b"), "handler-b")
		got += fmt.Sprintf(" %v %v %v", later.Value(targetKey("b")), ctx.Value(targetKey("b")), r.Context().Value(targetKey("b")))
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"got": got})
		return nil
	}
	rule := auth.Rule{Public: true}
	var routes []httpapi.Route
	for _, method := range []string{"GET", "POST"} {
		for _, path := range []string{"/three", "/one"} {
			routes = append(routes, httpapi.Route{Method: method, Pattern: path, Auth: rule, Handle: handle})
		}
	}
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL}, &auth.Authenticator{DB: db}, targetsGuard{}, httpapi.NewMetrics(), routes)
	apptest.Must(t, "new server", err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	for _, rt := range routes {
		want := `{"got":"guard-a2 guard-b guard-c handler-b guard-b guard-b"}`
		if rt.Pattern == "/one" {
			want = `{"got":"guard-a <nil> <nil> handler-b <nil> <nil>"}`
		}
		method := rt.Method
		req, _ := http.NewRequest(method, ts.URL+rt.Pattern, nil)
		resp, err := http.DefaultClient.Do(req)
		apptest.Must(t, "request", err)
		var body [256]byte
		n, _ := resp.Body.Read(body[:])
		resp.Body.Close()
		if got := string(body[:n]); got != want+"\n" && got != want {
			t.Errorf("%s %s: %d %s, want %s", method, rt.Pattern, resp.StatusCode, got, want)
		}
	}
}
