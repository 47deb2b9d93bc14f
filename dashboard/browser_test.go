package dashboard_test

// The dashboard's tests drive a real browser: Debian's chromium, headless,
// through chromedp (the Chrome DevTools Protocol from Go). They wait for
// what the page shows — a DOM state, the page's own counters
// (window.sagaDashboard) — never for time. Without chromium they are
// skipped; SAGA_CHROMIUM names another binary.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/dashboard"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "saga-dashboard-test")
	if err != nil {
		panic(err)
	}
	// No run of the machine's session dir may show up in a test's pages.
	os.Setenv("SAGA_SESSION_DIR", filepath.Join(dir, "sessions"))
	os.Setenv("SAGA_TMUX_SOCKET", "saga-dashboard-test-unused")
	testkit.Main(m, func() { os.RemoveAll(dir) })
}

// chromium is the browser's path; the test is skipped without one.
func chromium(t testing.TB) string {
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

// browser is one headless chromium with a fresh profile, closed when the
// test ends.
type browser struct {
	t   testing.TB
	ctx context.Context
}

func newBrowser(t testing.TB, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	path := chromium(t)
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
	return &browser{t: t, ctx: ctx}
}

// ctxFor is the browser's context with a deadline.
func (b *browser) ctxFor(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, timeout)
}

// do runs actions, failing the test on an error.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.ctxFor(30 * time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\n%s", err, b.text("body"))
	}
}

// navigateBy runs trigger and waits for the page it leads to to load.
func (b *browser) navigateBy(trigger chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.ctxFor(30 * time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, trigger)); err != nil {
		b.t.Fatalf("browser: %v\n%s", err, b.text("body"))
	}
}

// open navigates to url and waits for the page's stream to connect.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url))
	b.waitJS("window.sagaDashboard && window.sagaDashboard.connected", 15*time.Second)
}

// waitJS waits until the expression is true in the page: evaluated again
// at every DOM mutation (what the page shows changes the DOM), and every
// animation frame when the expression reads more than the DOM.
func (b *browser) waitJS(expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := b.ctxFor(timeout + 5*time.Second)
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
			b.t.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, b.text("body"))
		}
		return
	}
}

// eval evaluates expr into v.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	ctx, cancel := b.ctxFor(30 * time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			b.t.Fatalf("evaluate %s: %s: %v", expr, raw, err)
		}
	}
}

// text is the text of the first element matching sel ("" when none).
func (b *browser) text(sel string) string {
	ctx, cancel := b.ctxFor(5 * time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
	return s
}

// count is how many elements match sel.
func (b *browser) count(sel string) int {
	b.t.Helper()
	var n int
	b.eval(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
	return n
}

// location is the page's URL.
func (b *browser) location() string {
	b.t.Helper()
	var s string
	b.eval(`location.href`, &s)
	return s
}

// screenshot writes the page as a PNG into the test's artifact folder
// (`go test -artifacts` keeps it: make screenshots).
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	b.eval(`document.querySelector('#toast').replaceChildren(); document.activeElement && document.activeElement.blur(); true`, nil)
	ctx, cancel := b.ctxFor(30 * time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// click clicks the first element matching the CSS selector.
//
// Found and clicked in one evaluation in the page (an SVG element, which
// has no click(), gets the click event), once it is there and visible: a live update swapping the page's content between a DevTools
// lookup of the node and its click left chromedp.Click a stale node id
// ("Could not find node with given id", seen under load in CI).
func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e || !e.getClientRects().length) return false; if (typeof e.click === 'function') e.click(); else e.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window})); return true; })()`, sel))
}

// visible waits until an element matching the CSS selector is visible
// (evaluated in the page, as click).
func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!(e && e.getClientRects().length); })()`, sel))
}

// js evaluates expr for its effect.
func js(expr string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](expr) }

// confirmAction clicks a form's button and confirms the page's dialog.
func (b *browser) confirmAction(button string) {
	b.t.Helper()
	b.do(click(button), visible("#confirm-ok"), click("#confirm-ok"))
}

// served is a dashboard over local sources.
type served struct {
	srv    *dashboard.Server
	locals []*dashboard.Local
	base   string // http://127.0.0.1:port
}

func serve(t testing.TB, roots ...string) *served {
	t.Helper()
	s := &served{}
	var srcs []dashboard.Source
	for _, r := range roots {
		l, err := dashboard.OpenLocal(r, dashboard.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.locals = append(s.locals, l)
		srcs = append(srcs, l.Source())
	}
	srv, err := dashboard.Start(dashboard.Options{Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	s.srv = srv
	u, _ := url.Parse(srv.URL())
	s.base = "http://" + u.Host
	t.Cleanup(func() {
		srv.Close()
		for _, l := range s.locals {
			l.Close()
		}
	})
	return s
}

// client is an HTTP client holding the dashboard's cookie.
func (s *served) client(t testing.TB) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := c.Get(s.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("first visit: %s", res.Status)
	}
	return c
}

// nodes are the graph's nodes as drawn: id → class.
func (b *browser) nodes() map[string]string {
	b.t.Helper()
	var out map[string]string
	b.eval(`Object.fromEntries(Array.from(document.querySelectorAll('#graph .node')).map(n => [n.dataset.id, n.getAttribute('class')]))`, &out)
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
