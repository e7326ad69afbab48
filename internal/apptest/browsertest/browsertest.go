// Package browsertest gives a test package one headless chromium for all
// its browser tests, each test in a tab of its own browser context. A
// launch costs about two CPU-seconds; a tab a fraction of that.
package browsertest

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium is a test package's browser, started by the first Tab and
// ended by Close (from the package's TestMain). The zero value is ready
// to use; it is safe for concurrent use by parallel tests.
//
// The browser ignores certificate errors: servers under test on TLS use
// certificates of a test authority it does not trust, and what a browser
// does with a bad certificate is not forgeapi's to test.
type Chromium struct {
	once sync.Once
	ctx  context.Context // the browser's first tab: the parent of the tests' tabs
	err  error           // why the browser did not start
	stop func()          // kills the browser and removes its profile
}

// Tab opens a tab for t in a browser context of its own (its own cookies
// and storage) with a width x height viewport, and returns its context,
// which ends after timeout; the tab and its browser context close when t
// ends. t is skipped when chromium is not installed (.ci/run installs it)
// and fails when the browser or the tab does not start.
func (c *Chromium) Tab(t *testing.T, width, height int64, timeout time.Duration) context.Context {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(c.browser(t), chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(tab, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })
	// The first run opens the tab. The viewport is emulated: the
	// window-size flag sizes the window, which headless chromium makes at
	// least 500 px wide, and not the page's viewport.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// Close ends the browser, if one started.
func (c *Chromium) Close() {
	if c.stop != nil {
		c.stop()
	}
}

// browser returns the context of the browser, starting it on the first
// call.
func (c *Chromium) browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	c.once.Do(func() {
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("ignore-certificate-errors", true),
			// No UserDataDir: chromedp makes a temporary profile and
			// removes it when the browser stops.
		)
		// The browser lives as long as the context of its first run, so
		// that context has no timeout: Close ends it.
		ctx, cancelCtx := chromedp.NewContext(alloc)
		c.stop = func() { cancelCtx(); cancelAlloc() }
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			c.err = err
			return
		}
		c.ctx = ctx
	})
	if c.err != nil {
		t.Fatalf("start chromium: %v", c.err)
	}
	return c.ctx
}
