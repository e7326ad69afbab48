package apptest

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// AppOpts are the optional settings of a registered app.
type AppOpts struct {
	Events        []string
	Public        bool
	WebhookURL    string
	WebhookSecret string
}

// RegisterApp registers an app owned by owner with the permissions
// ("contents:read,statuses:write") through the service the admin command
// uses, and returns it with its client secret and private key PEM.
func (e *Env) RegisterApp(owner *accounts.Account, name, permissions string, opts ...AppOpts) *apps.Created {
	e.T.Helper()
	grant, err := auth.ParseGrant(permissions)
	if err != nil {
		e.T.Fatalf("permissions %q: %v", permissions, err)
	}
	n := apps.NewApp{Name: name, Owner: owner, Permissions: grant}
	if len(opts) > 0 {
		o := opts[0]
		n.Events, n.Public, n.WebhookURL, n.WebhookSecret = o.Events, o.Public, o.WebhookURL, o.WebhookSecret
	}
	a, err := e.Apps().Create(e.Context(), n)
	e.must(err)
	return a
}

// Install installs the app on the account (as the account): on the
// selected repositories, or on all of them when selected is one nil.
func (e *Env) Install(a *apps.Created, account *accounts.Account, selected ...*repos.Repository) *apps.Installation {
	e.T.Helper()
	all := len(selected) == 1 && selected[0] == nil
	var ids []int64
	if !all {
		for _, r := range selected {
			ids = append(ids, r.ID)
		}
	}
	inst, err := e.Apps().Install(e.Context(), &a.App, account, all, ids, nil)
	e.must(err)
	return inst
}

// Apps returns the server's apps service (its installation events reach
// the apps' webhooks).
func (e *Env) Apps() *apps.Service { return e.App.Apps }

// Context is a background context that carries the server's base URL,
// for service calls that render API objects (installation events).
func (e *Env) Context() context.Context {
	return httpapi.WithBaseURL(context.Background(), e.APIBase())
}

// ClientWith returns a go-github client for the server that sends its
// requests through rt (an app's or an installation's transport, built
// over Transport so that responses are validated).
func (e *Env) ClientWith(rt http.RoundTripper) *github.Client {
	return e.newClient(github.WithHTTPClient(&http.Client{Transport: rt}))
}

// APIBase is the server's base URL without a trailing slash, for
// clients configured with it.
func (e *Env) APIBase() string { return strings.TrimSuffix(e.URL, "/") }
