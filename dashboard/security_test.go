package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func get(t *testing.T, c *http.Client, u string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// TestRefusals: the token, the Host header, cross-site and non-POST state
// changes, no CORS, and paths that would leave the workspace.
func TestRefusals(t *testing.T) {
	root := shopRepo(t)
	// A journal that is a link to a file outside the workspace, and a
	// story folder that is one.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("## 2026 decision\nTOP-SECRET\n"), 0o644)
	os.MkdirAll(filepath.Join(outside, "evil"), 0o755)
	testkit.WriteFiles(t, outside, map[string]string{"evil/story.json": `{"id": "evil", "title": "Evil", "description": ""}` + "\n",
		"evil/t.json": task("t", "pending")})
	os.Symlink(filepath.Join(outside, "evil", "t.json"), filepath.Join(outside, "evil", "journal.md"))
	os.Remove(filepath.Join(root, ".saga/stories/shop--ui/journal.md"))
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, ".saga/stories/shop--ui/journal.md")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(outside, "evil"), filepath.Join(root, ".saga/stories/evil"))
	s := serve(t, root)
	key := repoKeyOf(root)
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// The token: none, a wrong one, then the right one once.
	if res, _ := get(t, plain, s.base+"/", nil); res.StatusCode != 401 {
		t.Errorf("no token: %s", res.Status)
	}
	if res, _ := get(t, plain, s.base+"/?token=wrong", nil); res.StatusCode != 401 {
		t.Errorf("wrong token: %s", res.Status)
	}
	if res, _ := get(t, plain, s.base+"/events", nil); res.StatusCode != 401 {
		t.Errorf("events without a token: %s", res.Status)
	}
	res, _ := get(t, plain, s.srv.URL(), nil)
	cookie := res.Header.Get("Set-Cookie")
	if res.StatusCode != 303 || res.Header.Get("Location") != "/" || !contains(cookie, "HttpOnly", "SameSite=Strict", "Path=/") {
		t.Errorf("first visit: %s, Location %q, cookie %q", res.Status, res.Header.Get("Location"), cookie)
	}
	c := s.client(t)

	// Host: only the bound address and localhost (DNS rebinding).
	port := strings.TrimPrefix(s.base, "http://127.0.0.1:")
	withCookie, _, _ := strings.Cut(cookie, ";")
	for host, want := range map[string]int{"evil.example:" + port: 421, "127.0.0.1.nip.io:" + port: 421, "localhost:" + port: 200,
		"127.0.0.1:" + port: 200, "LOCALHOST:" + port: 200, "localhost": 421, "127.0.0.1:1": 421} {
		if res, _ := get(t, plain, s.base+"/", map[string]string{"Host": host, "Cookie": withCookie}); res.StatusCode != want {
			t.Errorf("Host %s: %s, want %d", host, res.Status, want)
		}
	}

	// Every response says what the page may load, and nothing about CORS.
	res, body := get(t, c, s.base+"/", map[string]string{"Origin": "http://evil.example"})
	if csp := res.Header.Get("Content-Security-Policy"); !contains(csp, "default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for k := range res.Header {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			t.Errorf("CORS header %s", k)
		}
	}
	if strings.Contains(body, "http://") && strings.Contains(body, "<script src=\"http") {
		t.Errorf("the page loads a script from elsewhere")
	}
	req, _ := http.NewRequest("OPTIONS", s.base+"/ack", nil)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	if res, err := c.Do(req); err != nil || res.StatusCode != 405 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight: %v %v", res, err)
	}

	// State changes: POST only, from the dashboard's own origin.
	act := s.base + "/r/" + key + "/story/shop--docs/run"
	form := url.Values{"confirm": {"yes"}, "dryRun": {"on"}}
	for name, h := range map[string]map[string]string{
		"no origin":      nil,
		"another origin": {"Origin": "http://evil.example"},
		"another port":   {"Origin": "http://127.0.0.1:1"},
		"cross-site":     {"Sec-Fetch-Site": "cross-site"},
		"null origin":    {"Origin": "null"},
	} {
		if res, _ := post(t, c, act, form, h); res.StatusCode != 403 {
			t.Errorf("POST, %s: %s", name, res.Status)
		}
	}
	if res, _ := get(t, c, act+"?confirm=yes", nil); res.StatusCode != 405 && res.StatusCode != 404 {
		t.Errorf("GET of an action: %s", res.Status)
	}
	// The same origin passes the gate (and is then refused for another
	// reason: no such story, so nothing starts).
	if res, body := post(t, c, s.base+"/r/"+key+"/story/no-such/run", form,
		map[string]string{"Origin": s.base, "Accept": "application/json"}); res.StatusCode != 400 || !strings.Contains(body, "no story") {
		t.Errorf("same-origin POST: %s %s", res.Status, body)
	}
	// Without confirm=yes nothing runs: the page asks first.
	if res, body := post(t, c, act, url.Values{"dryRun": {"on"}}, map[string]string{"Origin": s.base}); res.StatusCode != 200 ||
		!strings.Contains(body, "Run story shop--docs with the simulated agent (dry run)?") {
		t.Errorf("unconfirmed POST: %s\n%s", res.Status, body)
	}

	// Paths never leave the workspace.
	for _, p := range []string{"/r/" + key + "/story/..%2F..%2Fetc", "/r/" + key + "/story/%2e%2e", "/r/" + key + "/epic/..",
		"/r/../../etc/passwd", "/assets/../../go.mod", "/assets/%2e%2e/server.go", "/r/" + key + "/story/shop--ui/review?file=../../../etc/passwd",
		"/r/nope/story/shop--ui"} {
		res, body := get(t, c, s.base+p, nil)
		if res.StatusCode == 200 && !strings.Contains(body, "is not among the files") && !strings.Contains(body, "has no branch") {
			t.Errorf("%s: %s", p, res.Status)
		}
		if strings.Contains(body, "root:") || strings.Contains(body, "module github.com") || strings.Contains(body, "package dashboard") {
			t.Errorf("%s leaked a file", p)
		}
	}
	// A journal linking outside is not read; nor is a story folder that
	// is a link.
	for _, story := range []string{"shop--ui", "evil"} {
		if _, body := get(t, c, s.base+"/r/"+key+"/story/"+story, nil); strings.Contains(body, "TOP-SECRET") || strings.Contains(body, "Work on t.") {
			t.Errorf("story %s shows a file from outside the workspace", story)
		}
	}
}

// TestBrowserRefusals: what a browser is refused — a page without the
// token, a rebound name, another site's form posting to the dashboard.
func TestBrowserRefusals(t *testing.T) {
	root := shopRepo(t)
	s := serve(t, root)
	port := strings.TrimPrefix(s.base, "http://127.0.0.1:")
	b := newBrowser(t, chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"))
	b.Do(chromedp.Navigate(s.base + "/"))
	if txt := b.Text("body"); !strings.Contains(txt, "carries the access token") {
		t.Errorf("without the token: %q", txt)
	}
	// A name an attacker's DNS rebinds to 127.0.0.1: refused, token or not.
	b.Do(chromedp.Navigate(strings.Replace(s.srv.URL(), "127.0.0.1", "rebound.test", 1)))
	if txt := b.Text("body"); !strings.Contains(txt, "not the dashboard's") {
		t.Errorf("rebound name: %q", txt)
	}
	// Another site's page posts a form to the dashboard, in a browser
	// holding the dashboard's cookie.
	b.open(s.srv.URL())
	key := repoKeyOf(root)
	needKey := "journal:" + key + ":fix-typo:Waiting for <img src=x onerror=\"document.title='pwned'\"> copy."
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id=f method=post action="%s/ack"><input name=key value=%q></form><script>document.getElementById('f').submit()</script>`,
			s.base, needKey)
	}))
	defer evil.Close()
	b.NavigateBy(chromedp.Navigate(evil.URL))
	b.WaitJS(`location.port === `+fmt.Sprintf("%q", port), 10*time.Second)
	if txt := b.Text("body"); !contains(txt, "open the URL") && !contains(txt, "another site") {
		t.Errorf("the other site's POST: %q", txt)
	}
	// The banner it tried to acknowledge is still there.
	b.open(s.base + "/")
	if n := b.Count(`#banners .banner`); n != 1 {
		t.Errorf("%d banners after the other site's POST, want 1", n)
	}
}
