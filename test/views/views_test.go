// Package views holds the views-agree test: one repository driven through
// a run's life, every face read after each step — `status` (text and
// JSON), `plan`, `follow`, the language server's lenses, diagnostics and
// saga/* notifications, the dashboard's pages — and compared.
// They render one read model (readmodel.ViewQuery, docs/architecture.md#one-read-model-of-a-run),
// so they must say the same state and counts of every story.
package views

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// repo is the example workspace as a git repository of its own, with the
// environment every command of the test runs in.
type repo struct {
	t    *testing.T
	dir  string
	env  []string
	bin  string
	dash string // the dashboard's base URL with its token
}

func newRepo(t *testing.T) *repo {
	bin := testkit.Binary(t)
	socket := testkit.TmuxServer(t)
	dir := t.TempDir()
	testkit.CopyInto(t, filepath.Join(testkit.ModuleRoot(t), "examples", "workspace", ".saga"), filepath.Join(dir, ".saga"))
	r := &repo{t: t, dir: dir, bin: bin}
	r.env = append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+filepath.Join(t.TempDir(), "sessions"), "SAGA_TMUX_SOCKET="+socket,
		"CLAUDE_CONFIG_DIR="+filepath.Join(t.TempDir(), "claude"), "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "example"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return r
}

func (r *repo) saga(args ...string) testkit.Result {
	r.t.Helper()
	res := testkit.Run(r.t, r.dir, r.env, "", r.bin, args...)
	return res
}

// storyView is what a face says of one story.
type storyView struct {
	State       string
	Done, Total int
	// Next is the action offered as its next step (readmodel.NextStep),
	// where the face says it: status (JSON), the story page, the lens.
	Next string
}

// fromStatus is `status <epic> --format json`.
func (r *repo) fromStatus(epic string) map[string]storyView {
	r.t.Helper()
	res := r.saga("status", epic, "--format", "json")
	var out struct {
		Epic struct {
			Stories []struct {
				ID          string
				State       string
				Done, Total int
			}
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		r.t.Fatalf("status --format json: %v\n%s\n%s", err, res.Stdout, res.Stderr)
	}
	m := map[string]storyView{}
	for _, s := range out.Epic.Stories {
		m[s.ID] = storyView{State: s.State, Done: s.Done, Total: s.Total}
	}
	return m
}

// startDashboard serves the repository and keeps its URL.
func (r *repo) startDashboard() {
	r.t.Helper()
	cmd := exec.Command(r.bin, "dashboard", "--addr", "127.0.0.1:0")
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	buf := make([]byte, 4096)
	var line string
	for !strings.Contains(line, "\n") {
		n, err := out.Read(buf)
		if err != nil {
			r.t.Fatalf("dashboard: %v (%q)", err, line)
		}
		line += string(buf[:n])
	}
	r.dash = strings.TrimSpace(strings.SplitN(line, "\n", 2)[0])
	go io.Copy(io.Discard, out)
}

// graphAttr is the graph's data attribute, in either quotes (the
// dashboard sends its JSON in single ones).
var graphAttr = regexp.MustCompile(`data-graph=(?:"([^"]*)"|'([^']*)')`)
var epicLink = regexp.MustCompile(`href="(/r/[^"/]+/epic/)`)

// fromDashboard is the dashboard's epic page: its graph's nodes.
func (r *repo) fromDashboard(epic string) map[string]storyView {
	r.t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	home := r.get(client, r.dash)
	m := epicLink.FindStringSubmatch(home)
	if m == nil {
		r.t.Fatalf("no epic link on the dashboard's home page")
	}
	base := strings.SplitN(r.dash, "/?", 2)[0]
	page := r.get(client, base+html.UnescapeString(m[1])+epic)
	g := graphAttr.FindStringSubmatch(page)
	if g == nil {
		r.t.Fatalf("no graph on the epic page")
	}
	var graph struct {
		Nodes []struct {
			ID          string
			State       string
			Done, Total int
		}
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(g[1]+g[2])), &graph); err != nil {
		r.t.Fatal(err)
	}
	out := map[string]storyView{}
	for _, n := range graph.Nodes {
		out[n.ID] = storyView{State: n.State, Done: n.Done, Total: n.Total}
	}
	return out
}

func (r *repo) get(c *http.Client, u string) string {
	r.t.Helper()
	if c.Jar == nil {
		c.Jar = newJar()
	}
	resp, err := c.Get(u)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		r.t.Fatalf("GET %s: %s\n%s", u, resp.Status, b)
	}
	return string(b)
}

// startServer starts the language server on the repository and waits
// for its load.
func (r *repo) startServer() (*lspclient.Client, string) {
	r.t.Helper()
	cmd := exec.Command(r.bin, "serve")
	cmd.Dir, cmd.Env = r.dir, r.env
	c, err := lspclient.Start(cmd, lspclient.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Stop(5 * time.Second) })
	root := "file://" + r.dir
	if _, err := c.Call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": root, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sagaNotifications": true}}, 30*time.Second); err != nil {
		r.t.Fatal(err)
	}
	mark := c.Mark()
	c.Notify("initialized", map[string]any{})
	if _, _, err := c.Next(mark, time.Now().Add(60*time.Second), func(m lspclient.Message) bool {
		return m.Method == "window/logMessage" && strings.Contains(string(m.Params), "loaded")
	}); err != nil {
		r.t.Fatalf("the server never said it loaded: %v", err)
	}
	return c, root
}

// lensOf is the text of the lenses on a story's story.json.
func (r *repo) lensOf(c *lspclient.Client, root, id string) string {
	r.t.Helper()
	uri := root + "/.saga/stories/" + id + "/story.json"
	m, err := c.Call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": uri}}, 30*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(m.Result)
}

var lensCounts = regexp.MustCompile(`(\d+)/(\d+) tasks done · status: (\w+)`)

// fromServer is the language server's lens on each story's story.json:
// "n/m tasks done · status: s".
func (r *repo) fromServer(stories []string) map[string]storyView {
	r.t.Helper()
	c, root := r.startServer()
	defer c.Stop(5 * time.Second)
	out := map[string]storyView{}
	for _, id := range stories {
		lens := r.lensOf(c, root, id)
		got := lensCounts.FindStringSubmatch(lens)
		if got == nil {
			r.t.Fatalf("lens of %s: %s", id, lens)
		}
		var v storyView
		fmt.Sscan(got[1], &v.Done)
		fmt.Sscan(got[2], &v.Total)
		v.State = got[3]
		out[id] = v
	}
	return out
}

// agree fails the test where the dashboard or the server differs from
// status. The lens shows the task-derived status, so its state is compared
// only where the story completed.
func agree(t *testing.T, step string, status, dash, server map[string]storyView) {
	t.Helper()
	for id, want := range status {
		if got, ok := dash[id]; !ok || got != want {
			t.Errorf("%s: %s: dashboard %+v, status %+v", step, id, got, want)
		}
		got := server[id]
		if got.Done != want.Done || got.Total != want.Total || (want.State == "completed") != (got.State == "completed") {
			t.Errorf("%s: %s: lens %+v, status %+v", step, id, got, want)
		}
	}
}

// TestViewsAgree: a dry run of the epic, then a reset of one story's dry
// run: status, the dashboard and the language server say the same of each
// story — and none counts the simulated work as the story's.
func TestViewsAgree(t *testing.T) {
	r := newRepo(t)
	r.startDashboard()
	stories := []string{"user-auth--setup-db", "user-auth--api", "user-auth--login-page"}
	before := r.fromStatus("user-auth")

	res := r.saga("run", "user-auth", "--dry-run", "--follow")
	if res.Code != 0 {
		t.Fatalf("run --dry-run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout+res.Stderr, "dry run completed") {
		t.Errorf("the runner's end line does not say it was a dry run:\n%s%s", res.Stdout, res.Stderr)
	}
	after := r.fromStatus("user-auth")
	for id, st := range before {
		if after[id] != st {
			t.Errorf("the dry run changed %s's own state: %+v, before %+v", id, after[id], st)
		}
	}
	text := r.saga("status", "user-auth").Stdout
	if !strings.Contains(text, "dry run completed") || !strings.Contains(text, "simulated") {
		t.Errorf("status does not show the dry run apart:\n%s", text)
	}
	var dash map[string]storyView
	testkit.WaitUntil(30*time.Second, func() bool {
		dash = r.fromDashboard("user-auth")
		return fmt.Sprint(dash) == fmt.Sprint(after)
	})
	agree(t, "after the dry run", after, dash, r.fromServer(stories))

	if res := r.saga("reset", "user-auth--login-page", "--yes"); res.Code != 0 {
		t.Fatalf("reset: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	after = r.fromStatus("user-auth")
	testkit.WaitUntil(30*time.Second, func() bool {
		dash = r.fromDashboard("user-auth")
		return fmt.Sprint(dash) == fmt.Sprint(after)
	})
	agree(t, "after reset", after, dash, r.fromServer(stories))
}

// fromStatusStory is `status <story> --format json`.
func (r *repo) fromStatusStory(id string) storyView {
	r.t.Helper()
	res := r.saga("status", id, "--format", "json")
	var out struct {
		Stories []struct {
			State       string
			Done, Total int
			Next        struct{ Action string }
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil || len(out.Stories) != 1 {
		r.t.Fatalf("status %s --format json: %v\n%s\n%s", id, err, res.Stdout, res.Stderr)
	}
	st := out.Stories[0]
	return storyView{State: st.State, Done: st.Done, Total: st.Total, Next: st.Next.Action}
}

var storyNext = regexp.MustCompile(`id="story-next" data-action="([^"]*)"`)

// lensNext is the action a story's lenses offer as its next step.
func lensNext(lens string) string {
	// In order: "Address review (n)" comes with "Review story".
	for _, a := range [][2]string{{"■ Stop", "stop"}, {"Address review (", "address-review"}, {"Review story", "review"}, {"▶ Open PR", "open-pr"}, {"▶ Run story", "run"}} {
		if strings.Contains(lens, `"title":"`+a[0]) {
			return a[1]
		}
	}
	return ""
}

var storyFacts = regexp.MustCompile(`id="story-facts" data-state="([^"]*)" data-done="(\d+)" data-total="(\d+)"`)

// storyPageURL is the URL of the dashboard's story page (the token is the
// cookie of a visit to r.dash).
func (r *repo) storyPageURL(client *http.Client, id string) string {
	r.t.Helper()
	home := r.get(client, r.dash)
	m := epicLink.FindStringSubmatch(home)
	if m == nil {
		r.t.Fatalf("no epic link on the dashboard's home page")
	}
	base := strings.SplitN(r.dash, "/?", 2)[0]
	return base + strings.TrimSuffix(html.UnescapeString(m[1]), "epic/") + "story/" + id
}

// fromDashboardStory is the dashboard's story page.
func (r *repo) fromDashboardStory(id string) storyView {
	r.t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	page := r.get(client, r.storyPageURL(client, id))
	f := storyFacts.FindStringSubmatch(page)
	if f == nil {
		r.t.Fatalf("no facts on the story page of %s", id)
	}
	v := storyView{State: f[1]}
	fmt.Sscan(f[2], &v.Done)
	fmt.Sscan(f[3], &v.Total)
	if n := storyNext.FindStringSubmatch(page); n != nil {
		v.Next = n[1]
	}
	return v
}

// TestViewsAgreeOnAStoryRun: a real run of a story (the stand-in claude)
// that fails, then its reset: `status` and the dashboard's story page, open
// all along, say the same — after the reset too (the page kept the ended
// run's state).
func TestViewsAgreeOnAStoryRun(t *testing.T) {
	r := newRepo(t)
	r.startDashboard()
	server, root := r.startServer() // open all along, as the dashboard
	story := "add-logout-button"
	r.env = append(r.env, "SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_STANDIN_SCRIPT=crash",
		"SAGA_GH="+filepath.Join(t.TempDir(), "no-gh"))
	res := r.saga("worker", story) // by hand: its files in the session dir, as a started one's
	if res.Code == 0 {
		t.Fatalf("the crashing agent's run ended 0:\n%s", res.Stderr)
	}
	check := func(step string) {
		t.Helper()
		want := r.fromStatusStory(story)
		var got storyView
		testkit.WaitUntil(30*time.Second, func() bool {
			got = r.fromDashboardStory(story)
			return got == want
		})
		if got != want {
			t.Errorf("%s: dashboard %+v, status %+v", step, got, want)
		}
	}
	check("after the failed run")
	lens := func(want bool) {
		t.Helper()
		var got string
		testkit.WaitUntil(30*time.Second, func() bool {
			got = r.lensOf(server, root, story)
			return strings.Contains(got, "last run: failed") == want
		})
		if strings.Contains(got, "last run: failed") != want {
			t.Errorf("the open server's lens (want the failed run shown: %v): %s", want, got)
		}
	}
	lens(true)
	if st := r.fromStatusStory(story); st.State == "pending" || st.State == "completed" {
		t.Fatalf("after the failed run status says %+v", st)
	}
	if res := r.saga("reset", story, "--yes"); res.Code != 0 {
		t.Fatalf("reset: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if st := r.fromStatusStory(story); st.State != "pending" {
		t.Fatalf("after reset status says %+v", st)
	}
	check("after reset")
	lens(false)
}
