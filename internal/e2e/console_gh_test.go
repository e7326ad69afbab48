package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// ghClientID is the OAuth client id built into the gh CLI (cli/cli
// internal/authflow), which it uses on every host; a self-managed
// server registers an application with it.
const ghClientID = "178c6fc778ccc68e1d6a"

// userCodePattern finds the one-time code gh prints.
var userCodePattern = regexp.MustCompile(`one-time code: ([A-Z0-9]{4}-[A-Z0-9]{4})`)

// TestGHAuthLogin runs `gh auth login --hostname HOST --web` against
// forgeapi on TLS: gh starts the device flow, prints the code, and polls;
// the code is approved in the browser on /login/device; gh then stores
// the token and `gh api user` works with it.
func TestGHAuthLogin(t *testing.T) {
	t.Parallel()
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed")
	}
	// gh takes a host name without a port: listen on 443 of a loopback
	// address of the test's own.
	if os.Geteuid() != 0 {
		t.Skip("gh needs the server on port 443, which only root may bind")
	}
	addr := fmt.Sprintf("127.%d.%d.%d:443", 100+os.Getpid()%100, time.Now().Nanosecond()%250+1, 7)
	e := apptest.Start(t, apptest.WithTLS(), func(c *app.Config) { c.Addr = addr })
	owner := e.User(apptest.Unique("admin"))
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	// The "GitHub CLI" application of the server, with gh's client id.
	_, err = accounts.CreateAppWithCredentials(context.Background(), e.App.DB, owner.ID, "GitHub CLI", "https://cli.github.com", ghClientID, "")
	apptest.Must(t, "create app", err)
	apptest.Must(t, "configure", e.App.OAuthWeb.Configure(context.Background(), ghClientID,
		oauthweb.ClientSettings{CallbackURL: "http://127.0.0.1/callback", DeviceFlow: true}))

	host := strings.TrimSuffix(strings.TrimPrefix(e.URL, "https://"), ":443")
	home := t.TempDir()
	env := []string{"HOME=" + home, "GH_CONFIG_DIR=" + filepath.Join(home, "gh"), "GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1",
		"SSL_CERT_FILE=" + e.Main.CAFile(), "PATH=" + os.Getenv("PATH"), "BROWSER=true", "GH_BROWSER=true"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gh, "auth", "login", "--hostname", host, "--web", "--git-protocol", "https")
	cmd.Env = env
	cmd.Stdin = strings.NewReader("\n")
	stderr, err := cmd.StderrPipe()
	apptest.Must(t, "stderr", err)
	cmd.Stdout = cmd.Stderr
	var out strings.Builder
	apptest.Must(t, "start gh", cmd.Start())
	codes := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if m := userCodePattern.FindStringSubmatch(sc.Text()); m != nil {
				codes <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(codes)
	}()
	code, ok := <-codes
	if !ok {
		_ = cmd.Wait()
		t.Fatalf("gh printed no code:\n%s", out.String())
	}

	b := newBrowser(t) // the shared browser ignores certificate errors
	b.goTo(e, "/login/device?user_code="+code)
	b.signIn(user.Login, consolePassword)
	b.run("device form", chromedp.WaitVisible(chromedp.CSS("#device-form")), chromedp.Click(chromedp.CSS("#continue")),
		chromedp.WaitVisible(chromedp.CSS("#device-confirm-form")))
	b.shot("gh-device")
	if name := b.text("#app-name"); name != "GitHub CLI" {
		t.Fatalf("device page names %q", name)
	}
	b.run("approve", chromedp.Click(chromedp.CSS("#authorize")), chromedp.WaitVisible(chromedp.CSS("#device-approved")))

	if err := cmd.Wait(); err != nil {
		t.Fatalf("gh auth login: %v\n%s", err, out.String())
	}
	t.Logf("gh auth login:\n%s", out.String())
	api := exec.Command(gh, "api", "--hostname", host, "user", "--jq", ".login")
	api.Env = env
	got, err := api.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != user.Login {
		t.Fatalf("gh api user: %v %s", err, got)
	}
	hosts, err := os.ReadFile(filepath.Join(home, "gh", "hosts.yml"))
	if err != nil || !strings.Contains(string(hosts), "user: "+user.Login) {
		t.Fatalf("gh hosts.yml: %v\n%s", err, hosts)
	}
}
