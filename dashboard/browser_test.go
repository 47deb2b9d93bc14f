package dashboard_test

// The dashboard's tests drive a real browser: Debian's chromium, headless,
// through chromedp (the Chrome DevTools Protocol from Go). They wait for
// what the page shows — a DOM state, the page's own counters
// (window.sagaDashboard) — never for time. Without chromium they are
// skipped; SAGA_CHROMIUM names another binary.

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/dashboard"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	tbrowser "github.com/saga-ai/saga-lsp/internal/testkit/browser"
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

// browser is the tests' headless chromium (internal/testkit/browser) with
// what the dashboard's pages add: their stream, their confirmation dialog,
// their graph.
type browser struct{ *tbrowser.Browser }

func newBrowser(t testing.TB, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	return &browser{tbrowser.New(t, extra...)}
}

// open navigates to url and waits for the page's stream to connect.
func (b *browser) open(url string) {
	b.T.Helper()
	b.Do(chromedp.Navigate(url))
	b.WaitJS("window.sagaDashboard && window.sagaDashboard.connected", 15*time.Second)
}

// screenshot writes the page as a PNG into the test's artifact folder
// (`go test -artifacts` keeps it: make screenshots).
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	b.Eval(`document.querySelector('#toast').replaceChildren(); document.activeElement && document.activeElement.blur(); true`, nil)
	ctx, cancel := b.CtxFor(30 * time.Second)
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

var (
	click   = tbrowser.Click
	visible = tbrowser.Visible
	js      = tbrowser.JS
)

// confirmAction clicks a form's button and confirms the page's dialog.
func (b *browser) confirmAction(button string) {
	b.T.Helper()
	b.Do(click(button), visible("#confirm-ok"), click("#confirm-ok"))
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
	b.T.Helper()
	var out map[string]string
	b.Eval(`Object.fromEntries(Array.from(document.querySelectorAll('#graph .node')).map(n => [n.dataset.id, n.getAttribute('class')]))`, &out)
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
