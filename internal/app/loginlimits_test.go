package app_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
)

// The server sees every test client as 127.0.0.1; a client that dials
// from another loopback address (Linux routes all of 127/8 to lo) is
// another client address to the login limits and the rate limiter.

// addressClient returns an HTTP client whose connections come from the
// loopback address ip.
func addressClient(ip string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
}

// doFrom sends a request through client with an Authorization header
// value (may be "") and header pairs, and returns the response and body.
func doFrom(t *testing.T, env *apptest.Env, client *http.Client, method, path, authorization, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
	apptest.Must(t, "new request", err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	apptest.Must(t, method+" "+path, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read body", err)
	return resp, b
}

// wantLoginBlocked checks the 403 of a blocked login: the platform's
// message with the time the block ends, which Retry-After counts down to.
func wantLoginBlocked(t *testing.T, what string, resp *http.Response, body []byte, now time.Time, window time.Duration) {
	t.Helper()
	e := wantError(t, what, resp, body, http.StatusForbidden)
	until := blockEnd(t, what, e.Message)
	if until.Before(now) || until.After(now.Add(window+time.Second)) {
		t.Fatalf("%s: block ends at %s, want within %s of %s", what, until, window, now)
	}
	wantRetryAfter(t, what, resp, window)
}

// blockEnd returns the time a blocked login's message says the block ends.
func blockEnd(t *testing.T, what, message string) time.Time {
	t.Helper()
	rest, ok := strings.CutPrefix(message, auth.LoginBlockedMessage+" Please try again later (after ")
	if !ok || !strings.HasSuffix(rest, ").") {
		t.Fatalf("%s: message %q is not the blocked-login message", what, message)
	}
	until, err := time.Parse(time.RFC3339, strings.TrimSuffix(rest, ")."))
	apptest.Must(t, what+": parse the end of the block", err)
	return until
}

func wantRetryAfter(t *testing.T, what string, resp *http.Response, window time.Duration) {
	t.Helper()
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > int(window.Seconds())+1 {
		t.Fatalf("%s: Retry-After %q, want 1..%v seconds", what, resp.Header.Get("Retry-After"), window.Seconds())
	}
}

func TestWrongPasswordsBlockTheAccountFromThatAddress(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octocat := env.User("octocat", apptest.UserOpts{Password: "correct horse"})
	token := env.Token(octocat, "repo")
	first, second := addressClient("127.0.0.1"), addressClient("127.0.0.2")

	// A success before any failure writes nothing and stays a success.
	resp, body := doFrom(t, env, first, "GET", "/user", basic("octocat", "correct horse"), "")
	wantStatus(t, "right password", resp, body, http.StatusOK)

	// Each failure is a 401 charged to the address's anonymous budget.
	for i := 1; i <= auth.DefaultLoginFailuresPerAddress; i++ {
		resp, body := doFrom(t, env, first, "GET", "/user", basic("octocat", "guess"+strconv.Itoa(i)), "")
		wantError(t, "wrong password "+strconv.Itoa(i), resp, body, http.StatusUnauthorized)
		if got, want := resp.Header.Get("X-Ratelimit-Remaining"), strconv.Itoa(60-i); got != want || resp.Header.Get("X-Ratelimit-Limit") != "60" {
			t.Fatalf("wrong password %d: anonymous budget remaining %q (limit %q), want %s of 60",
				i, got, resp.Header.Get("X-Ratelimit-Limit"), want)
		}
	}
	now := time.Now()
	resp, body = doFrom(t, env, first, "GET", "/user", basic("octocat", "one more"), "")
	wantLoginBlocked(t, "wrong password past the limit", resp, body, now, auth.DefaultLoginFailureWindow)
	if resp.Header.Get("X-Ratelimit-Remaining") != strconv.Itoa(60-auth.DefaultLoginFailuresPerAddress-1) {
		t.Fatalf("a blocked attempt did not spend the anonymous budget: remaining %q", resp.Header.Get("X-Ratelimit-Remaining"))
	}
	resp, body = doFrom(t, env, first, "GET", "/user", basic("octocat", "correct horse"), "")
	wantLoginBlocked(t, "right password while blocked", resp, body, now, auth.DefaultLoginFailureWindow)

	// go-github reads the same refusal.
	_, ghResp, err := env.BasicClient("octocat", "correct horse", "").Users.Get(context.Background(), "")
	var ghErr *github.ErrorResponse
	if apptest.ResponseStatus(ghResp) != http.StatusForbidden || !asErrorResponse(err, &ghErr) ||
		!strings.HasPrefix(ghErr.Message, auth.LoginBlockedMessage) {
		t.Fatalf("go-github while blocked: status %d, err %v", apptest.ResponseStatus(ghResp), err)
	}

	// Tokens are not affected.
	resp, body = doFrom(t, env, first, "GET", "/user", "token "+token, "")
	wantStatus(t, "token while the password is blocked", resp, body, http.StatusOK)

	// Another address is not: its success resets its own count only.
	resp, body = doFrom(t, env, second, "GET", "/user", basic("octocat", "wrong"), "")
	wantError(t, "wrong password from another address", resp, body, http.StatusUnauthorized)
	resp, body = doFrom(t, env, second, "GET", "/user", basic("octocat", "correct horse"), "")
	wantStatus(t, "right password from another address", resp, body, http.StatusOK)
	resp, body = doFrom(t, env, first, "GET", "/user", basic("octocat", "correct horse"), "")
	wantLoginBlocked(t, "right password from the blocked address after another's success", resp, body, now, auth.DefaultLoginFailureWindow)

	// An unknown login is a plain 401 however often it is tried.
	for i := 0; i <= auth.DefaultLoginFailuresPerAddress; i++ {
		resp, body = doFrom(t, env, second, "GET", "/user", basic("nobody-here", "x"), "")
	}
	wantError(t, "unknown login", resp, body, http.StatusUnauthorized)
}

func asErrorResponse(err error, target **github.ErrorResponse) bool {
	e, ok := err.(*github.ErrorResponse)
	if ok {
		*target = e
	}
	return ok
}

// settableClock is a clock tests move forward.
type settableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settableClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *settableClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestAccountLimitAcrossAddressesAndTheEndOfTheBlock(t *testing.T) {
	t.Parallel()
	clock := &settableClock{t: time.Now()}
	limits := auth.LoginLimits{PerAddress: 3, PerAccount: 5, Window: 10 * time.Minute}
	env := apptest.Start(t, apptest.WithClock(clock.Now), func(c *app.Config) { c.LoginLimits = limits })
	env.User("octocat", apptest.UserOpts{Password: "correct horse"})
	a, b, c := addressClient("127.0.0.2"), addressClient("127.0.0.3"), addressClient("127.0.0.4")

	for i := 0; i < 3; i++ {
		resp, body := doFrom(t, env, a, "GET", "/user", basic("octocat", "wrong"), "")
		wantError(t, "wrong password from a", resp, body, http.StatusUnauthorized)
	}
	resp, body := doFrom(t, env, a, "GET", "/user", basic("octocat", "correct horse"), "")
	wantLoginBlocked(t, "a past its limit", resp, body, clock.Now(), limits.Window)
	for i := 0; i < 2; i++ {
		resp, body := doFrom(t, env, b, "GET", "/user", basic("octocat", "wrong"), "")
		wantError(t, "wrong password from b", resp, body, http.StatusUnauthorized)
	}
	// Five failures in all: the account is blocked from every address.
	resp, body = doFrom(t, env, c, "GET", "/user", basic("octocat", "correct horse"), "")
	wantLoginBlocked(t, "a third address past the account's limit", resp, body, clock.Now(), limits.Window)

	// The block ends with the window.
	clock.Add(limits.Window)
	resp, body = doFrom(t, env, c, "GET", "/user", basic("octocat", "correct horse"), "")
	wantStatus(t, "right password once the window ended", resp, body, http.StatusOK)
	resp, body = doFrom(t, env, a, "GET", "/user", basic("octocat", "correct horse"), "")
	wantStatus(t, "right password from a once the window ended", resp, body, http.StatusOK)
}

func TestOneTimePasswordGuessingIsLimited(t *testing.T) {
	t.Parallel()
	clock := &settableClock{t: time.Now()}
	env := apptest.Start(t, apptest.WithRateLimit(), apptest.WithClock(clock.Now))
	const secret = "JBSWY3DPEHPK3PXP"
	env.User("twofa", apptest.UserOpts{Password: "correct horse", TOTPSecret: secret})
	client := addressClient("127.0.0.1")
	password := basic("twofa", "correct horse")
	create := func(what, otp string) (*http.Response, []byte) {
		t.Helper()
		headers := []string{}
		if otp != "" {
			headers = append(headers, "X-Service-OTP", otp)
		}
		return doFrom(t, env, client, "POST", "/authorizations", password, `{"scopes":["repo"],"note":"`+what+`"}`, headers...)
	}
	code := func() string {
		c, err := auth.TOTPCode(secret, clock.Now())
		apptest.Must(t, "totp code", err)
		return c
	}
	wrong := func() string { // a code of a step outside the accepted skew
		c, err := auth.TOTPCode(secret, clock.Now().Add(-time.Hour))
		apptest.Must(t, "totp code", err)
		if c == code() {
			t.Skip("the code an hour ago equals the current one")
		}
		return c
	}

	// The challenge (no code) is not a failed attempt, but a 401 charged
	// to the address's anonymous budget.
	resp, body := create("challenge", "")
	wantError(t, "no code", resp, body, http.StatusUnauthorized)
	if resp.Header.Get("X-Service-OTP") != "required; app" || resp.Header.Get("X-Ratelimit-Limit") != "60" ||
		resp.Header.Get("X-Ratelimit-Used") != "1" {
		t.Fatalf("no code: OTP header %q, rate limit %q used %q; want the challenge charged to the anonymous budget",
			resp.Header.Get("X-Service-OTP"), resp.Header.Get("X-Ratelimit-Limit"), resp.Header.Get("X-Ratelimit-Used"))
	}

	// Wrong codes after the right password count; the right code resets
	// the count.
	for i := 1; i < auth.DefaultLoginFailuresPerAddress; i++ {
		resp, body := create("guess", wrong())
		wantError(t, "wrong code "+strconv.Itoa(i), resp, body, http.StatusUnauthorized)
		if resp.Header.Get("X-Ratelimit-Used") != strconv.Itoa(1+i) {
			t.Fatalf("wrong code %d: anonymous budget used %q, want %d", i, resp.Header.Get("X-Ratelimit-Used"), 1+i)
		}
	}
	resp, body = create("right", code())
	wantStatus(t, "right code", resp, body, http.StatusCreated)
	clock.Add(auth.TOTPPeriod * time.Second) // a new step: its code is not a replay

	for i := 1; i <= auth.DefaultLoginFailuresPerAddress; i++ {
		resp, body := create("guess", wrong())
		wantError(t, "wrong code after the reset "+strconv.Itoa(i), resp, body, http.StatusUnauthorized)
	}
	resp, body = create("blocked", code())
	wantLoginBlocked(t, "right code past the limit", resp, body, clock.Now(), auth.DefaultLoginFailureWindow)
}

func TestGitOverHTTPWrongPasswordsAreLimited(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octocat := env.User("octocat", apptest.UserOpts{Password: "correct horse"})
	env.Repo(octocat, "hello", apptest.RepoOpts{Private: true})
	dir := t.TempDir()

	for i := 1; i <= auth.DefaultLoginFailuresPerAddress; i++ {
		out, err := apptest.TryGit(t, dir, "ls-remote", env.GitURL("octocat", "hello", "octocat", "wrong"))
		if err == nil || strings.Contains(out, auth.LoginBlockedMessage) {
			t.Fatalf("git ls-remote with a wrong password %d: err %v, output:\n%s", i, err, out)
		}
	}
	// The failures spent the address's anonymous budget.
	resp, body := env.Do("GET", "/rate_limit", "", nil)
	wantStatus(t, "rate limit", resp, body, http.StatusOK)
	if used, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Used")); used < auth.DefaultLoginFailuresPerAddress {
		t.Fatalf("after %d failed git logins the anonymous budget used is %q", auth.DefaultLoginFailuresPerAddress, resp.Header.Get("X-Ratelimit-Used"))
	}

	for _, password := range []string{"wrong", "correct horse"} {
		out, err := apptest.TryGit(t, dir, "clone", env.GitURL("octocat", "hello", "octocat", password), "clone-"+strings.ReplaceAll(password, " ", "-"))
		if err == nil || !strings.Contains(out, "remote: "+auth.LoginBlockedMessage+" Please try again later (after ") {
			t.Fatalf("git clone with password %q while blocked: err %v, output:\n%s", password, err, out)
		}
	}

	// The API refuses the password too; a token still clones.
	resp, body = env.Do("GET", "/user", "", nil, "Authorization", basic("octocat", "correct horse"))
	wantLoginBlocked(t, "API password after git failures", resp, body, time.Now(), auth.DefaultLoginFailureWindow)
	apptest.Git(t, dir, "clone", env.GitURL("octocat", "hello", "octocat", env.Token(octocat, "repo")), "by-token")
}
