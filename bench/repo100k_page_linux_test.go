//go:build linux

package bench

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/bench/workload"
)

// storyHref finds the story page's link on the dashboard's home page.
var storyHref = regexp.MustCompile(`href="(/r/[^"]*/story/` + workload.RepoStory + `)"`)

// storyPageTimes are the wall times, in seconds, of the dashboard's story
// page of workload.RepoStory served by `saga-lsp dashboard` in the
// repository big and in small (each dashboard started afresh, with env),
// the quickest of three requests each, alternating; ok is false where the
// dashboard is not measured.
func storyPageTimes(b *testing.B, bin, big string, bigEnv []string, small string, smallEnv []string) (bigS, smallS float64, ok bool) {
	b.Helper()
	type page struct {
		d      *dashProc
		client *http.Client
		url    string
	}
	open := func(root string, env []string) page {
		d := startDashboard(b, bin, root, env)
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 2 * time.Minute}
		home := getPage(b, c, d.url) // sets the token's cookie
		m := storyHref.FindStringSubmatch(home)
		if m == nil {
			b.Fatalf("no link to story %s on the dashboard's home page of %s", workload.RepoStory, root)
		}
		return page{d, c, d.base + m[1]}
	}
	stop := func(p page) {
		p.d.cmd.Process.Signal(os.Interrupt)
		p.d.cmd.Wait()
	}
	bp, sp := open(big, bigEnv), open(small, smallEnv)
	defer stop(bp)
	defer stop(sp)
	timed := func(p page) float64 {
		start := time.Now()
		getPage(b, p.client, p.url)
		return time.Since(start).Seconds()
	}
	bigS, smallS = 1e9, 1e9
	for range 3 {
		bigS, smallS = min(bigS, timed(bp)), min(smallS, timed(sp))
	}
	return bigS, smallS, true
}

// getPage is the body of a page that must answer 200.
func getPage(b *testing.B, c *http.Client, url string) string {
	b.Helper()
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v\n%.500s", url, resp.StatusCode, err, body)
	}
	return string(body)
}
