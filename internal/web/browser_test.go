package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBlobPageInBrowser opens a file's page at a line anchor in headless
// chromium (skipped without it; .ci/run installs it): the code is
// highlighted, the anchored line is marked, and the page fits a phone's
// width. A screenshot stays in the test's temp dir.
func TestBlobPageInBrowser(t *testing.T) {
	t.Parallel()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	f := newFixture(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(375, 800))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	err = chromedp.Do(ctx,
		chromedp.Navigate(f.e.URL+"/"+f.org+"/widgets/blob/main/main.go#L4"),
		chromedp.WaitVisible(chromedp.CSS("#L4")))
	if err != nil {
		t.Fatalf("open the blob page: %v", err)
	}
	lineText := run(t, ctx, chromedp.Text(chromedp.CSS("#L4")))
	keyword := run(t, ctx, chromedp.Text(chromedp.CSS(".chroma .kn")))
	background := run(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#L4').closest('.line')).backgroundColor`))
	overflow := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	png := run(t, ctx, chromedp.FullScreenshot(90))
	shot := filepath.Join(t.TempDir(), "blob.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	if strings.TrimSpace(lineText) != "4" {
		t.Errorf("#L4 reads %q, want 4", lineText)
	}
	if keyword != "package" {
		t.Errorf("the highlighted keyword is %q, want package", keyword)
	}
	if background == "" || background == "rgba(0, 0, 0, 0)" {
		t.Errorf("the anchored line is not marked (background %q)", background)
	}
	if overflow {
		t.Errorf("the page is wider than a 375 px screen")
	}
}

// run runs one browser action and returns its result, failing the test
// on an error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}
