//go:build unix

package lsp

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOpenDashboard: saga.openDashboard starts one dashboard per server
// over the server's own snapshots — an edit in the editor reaches an open
// page's event stream — answers the same URL after, and stops with the
// server.
func TestOpenDashboard(t *testing.T) {
	root := liveTestdata(t)
	c := startLive(t, root)
	var first, again dashboardResult
	m := c.execCommand("saga.openDashboard", []any{})
	if m.Error != nil || json.Unmarshal(m.Result, &first) != nil || !first.Started || !strings.Contains(first.URL, "?token=") {
		t.Fatalf("openDashboard: %s %v", m.Result, m.Error)
	}
	json.Unmarshal(c.execCommand("saga.openDashboard", nil).Result, &again)
	if again.URL != first.URL || again.Started {
		t.Errorf("second openDashboard: %+v, want the first's URL %s", again, first.URL)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	res, err := hc.Get(first.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "ship-it") {
		t.Fatalf("the dashboard's page: %s\n%s", res.Status, body)
	}
	// An open page's event stream hears of an edit in the editor.
	u, _ := url.Parse(first.URL)
	stream, err := (&http.Client{Jar: jar}).Get("http://" + u.Host + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	lines := bufio.NewReader(stream.Body)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: hello") {
			break
		}
	}
	rel := ".saga/stories/ship-it/build.json"
	text := c.open(rel)
	c.didChange(rel, 2, wholeText(strings.Replace(text, `"pending"`, `"in_progress"`, 1)))
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the edit showed: %v", err)
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"ship-it"`) {
			break
		}
	}
	// The server exits: the dashboard with it.
	c.in.Close()
	select {
	case code := <-c.exit:
		c.exit <- code // for the harness's clean-up
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
	}
	if _, err := hc.Get("http://" + u.Host + "/"); err == nil {
		t.Error("the dashboard still answers after the server exited")
	}
}
