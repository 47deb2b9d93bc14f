// Package browser is the tests' real browser: Debian's chromium, headless,
// driven through chromedp (the Chrome DevTools Protocol from Go), with a
// fresh profile per test. A test waits for what a page shows — a DOM
// state, a page's own counters — never for time. Without chromium the test
// needs it (testkit.Needs: skipped, or failed under SAGA_TEST_NEED_ALL);
// SAGA_CHROMIUM names another binary. Test-only: the dashboard's tests and
// the views-agree test (test/views) use it.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Chromium is the browser's path; the test needs one.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SAGA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testkit.Needs(t, "chromium is not installed (apt-get install chromium, or set SAGA_CHROMIUM)")
	return ""
}

// Browser is one headless chromium (or a tab of one), closed when the test
// ends.
type Browser struct {
	T   testing.TB
	Ctx context.Context
}

// New starts a headless chromium with a fresh profile.
func New(t testing.TB, extra ...chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	path := Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Browser{T: t, Ctx: ctx}
}

// CtxFor is the browser's context with a deadline.
func (b *Browser) CtxFor(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.Ctx, timeout)
}

// Do runs actions, failing the test on an error.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	ctx, cancel := b.CtxFor(30 * time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.T.Fatalf("browser: %v\n%s", err, b.Text("body"))
	}
}

// NavigateBy runs trigger and waits for the page it leads to to load.
func (b *Browser) NavigateBy(trigger chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	ctx, cancel := b.CtxFor(30 * time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, trigger)); err != nil {
		b.T.Fatalf("browser: %v\n%s", err, b.Text("body"))
	}
}

// Back goes back one page in the tab's history, as the Back button does,
// and returns once the page before is the tab's: loaded again, or restored
// from the back-forward cache (the frame's navigation event either way).
// A restored page fires no load event — chromedp's NavigateBack waits for
// one, and timed out when chromium 156 restored the dashboard's page
// (which lets its event stream go on pagehide so that it can be kept) —
// and chromedp's DOM queries and polls do not follow it: look at a page
// restored this way with InPage.
func (b *Browser) Back() {
	b.T.Helper()
	ctx, cancel := b.CtxFor(30 * time.Second)
	defer cancel()
	navigated := make(chan struct{}, 1)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventFrameNavigated); ok && e.Frame != nil && e.Frame.ParentID == "" {
			select {
			case navigated <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		b.T.Fatalf("browser: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(history.back(), true)`)); err != nil {
		b.T.Fatalf("browser: history.back(): %v", err)
	}
	select {
	case <-navigated:
	case <-ctx.Done():
		b.T.Fatalf("browser: back: no navigation: %v", ctx.Err())
	}
}

// InPage waits until the expression is true in the tab's page, evaluated
// by the page itself at every animation frame (one promise, awaited):
// unlike WaitJS, it works in a page restored from the back-forward cache.
func (b *Browser) InPage(expr string, timeout time.Duration) {
	b.T.Helper()
	ctx, cancel := b.CtxFor(timeout)
	defer cancel()
	wait := `new Promise((resolve) => { const f = () => { let v = false; try { v = !!(` + expr + `); } catch (e) {}
		if (v) resolve(true); else requestAnimationFrame(f); }; f(); })`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](wait, chromedp.EvalAwaitPromise)); err != nil {
		b.T.Fatalf("waiting in the page for %s: %v\npage:\n%s", expr, err, b.Text("body"))
	}
}

// WaitJS waits until the expression is true in the page: evaluated again
// at every DOM mutation (what the page shows changes the DOM), and every
// animation frame when the expression reads more than the DOM.
func (b *Browser) WaitJS(expr string, timeout time.Duration) {
	b.T.Helper()
	ctx, cancel := b.CtxFor(timeout + 5*time.Second)
	defer cancel()
	deadline := time.Now().Add(timeout)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		// A document replaced while the poll ran (a navigation the test
		// started just before) takes its execution context along: poll
		// again in the new one.
		if err != nil && strings.Contains(err.Error(), "Cannot find context with specified id") && time.Now().Before(deadline) {
			continue
		}
		if err != nil {
			b.T.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, b.Text("body"))
		}
		return
	}
}

// Eval evaluates expr into v.
func (b *Browser) Eval(expr string, v any) {
	b.T.Helper()
	ctx, cancel := b.CtxFor(30 * time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		b.T.Fatalf("evaluate %s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			b.T.Fatalf("evaluate %s: %s: %v", expr, raw, err)
		}
	}
}

// Text is the text of the first element matching sel ("" when none).
func (b *Browser) Text(sel string) string {
	ctx, cancel := b.CtxFor(5 * time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
	return s
}

// Count is how many elements match sel.
func (b *Browser) Count(sel string) int {
	b.T.Helper()
	var n int
	b.Eval(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
	return n
}

// Location is the page's URL.
func (b *Browser) Location() string {
	b.T.Helper()
	var s string
	b.Eval(`location.href`, &s)
	return s
}

// Click clicks the first element matching the CSS selector.
//
// Found and clicked in one evaluation in the page (an SVG element, which
// has no click(), gets the click event), once it is there and visible: a
// live update swapping the page's content between a DevTools lookup of the
// node and its click left chromedp.Click a stale node id ("Could not find
// node with given id", seen under load in CI).
func Click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e || !e.getClientRects().length) return false; if (typeof e.click === 'function') e.click(); else e.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window})); return true; })()`, sel))
}

// Visible waits until an element matching the CSS selector is visible
// (evaluated in the page, as Click).
func Visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!(e && e.getClientRects().length); })()`, sel))
}

// JS evaluates expr for its effect.
func JS(expr string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](expr) }
