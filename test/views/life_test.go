//go:build unix

package views

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/browser"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/runs/github"
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// life is a repository with a bare origin, the generated workflow on
// origin's main, the stand-in claude and gh, a dashboard and a language
// server open all along (its saga/* notifications kept).
type life struct {
	*repo
	gh, ghState string
	server      *lspclient.Client
	root        string // the server's root URI
	// pages are the dashboard's story pages open in a real browser, each
	// from its story's first look on: they follow the life live.
	pages map[string]*browser.Browser
}

func newLife(t *testing.T) *life {
	r := newRepo(t)
	l := &life{repo: r, pages: map[string]*browser.Browser{}}
	base := t.TempDir()
	testkit.BareOrigin(t, r.dir)
	if _, err := github.Install(r.dir, github.Source{Version: "v1.4.2", GoVersion: "1.26"}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, r.dir, "add", ".github")
	testkit.Git(t, r.dir, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "saga-story workflow")
	testkit.Git(t, r.dir, "push", "-q", "origin", "main")
	l.gh, l.ghState = testkit.Build(t, "./testdata/standin/gh"), filepath.Join(base, "gh.json")
	r.env = append(r.env, "PATH="+filepath.Dir(r.bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_GH="+l.gh, "GH_STANDIN_STATE="+l.ghState,
		"GH_STANDIN_SECRET_ANTHROPIC_API_KEY=sk-ant-standin", "SAGA_STANDIN_SCRIPT=all")
	t.Cleanup(l.cancelGitHubRuns)
	r.startDashboard()
	l.server, l.root = r.startServer()
	return l
}

// cancelGitHubRuns ends what the gh stand-in still runs.
func (l *life) cancelGitHubRuns() {
	var st struct {
		Runs []struct {
			ID     int64 `json:"databaseId"`
			Status string
			PID    int
		}
	}
	if data, err := os.ReadFile(l.ghState); err == nil {
		json.Unmarshal(data, &st)
	}
	for _, r := range st.Runs {
		if r.Status != "completed" && r.PID > 0 {
			testkit.Run(l.t, l.dir, l.env, "", l.gh, "run", "cancel", fmt.Sprint(r.ID))
			testkit.WaitExit(r.PID, 30*time.Second)
		}
	}
}

func (l *life) ok(args ...string) testkit.Result {
	l.t.Helper()
	res := l.saga(args...)
	if res.Code != 0 {
		l.t.Fatalf("saga-lsp %v: exit %d\n%s\n%s", args, res.Code, res.Stdout, res.Stderr)
	}
	return res
}

// commitOnMain writes a file of the example's, commits it on main and
// pushes it.
func (l *life) commitOnMain(rel, text, msg string) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.dir, rel), []byte(text), 0o644); err != nil {
		l.t.Fatal(err)
	}
	testkit.Git(l.t, l.dir, "add", rel)
	testkit.Git(l.t, l.dir, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", msg)
	testkit.Git(l.t, l.dir, "push", "-q", "origin", "main")
}

// said is what one face says of one story: its state (a story's own:
// pending, running, completed, failed, stopped, …), its tasks' counts,
// the base its run built on and its next step, where the face says them.
type said struct {
	State       string
	Done, Total int
	Next        string // the action offered as its next step
}

// storyStatus is `status <story>`, JSON (fromStatusStory) and text.
func (l *life) storyStatus(id string) (said, string) {
	l.t.Helper()
	return said(l.fromStatusStory(id)), l.saga("status", id).Stdout
}

var lensRunning = regexp.MustCompile(`● (running · (\d+)/(\d+) tasks done|GitHub Actions)`)
var lensLast = regexp.MustCompile(` · last run: (\w+)`)

// storyLens is the open server's lens on the story's story.json.
func (l *life) storyLens(id string) (said, string) {
	l.t.Helper()
	lens := l.lensOf(l.server, l.root, id)
	v := said{Next: lensNext(lens)}
	if m := lensRunning.FindStringSubmatch(lens); m != nil {
		v.State = "running"
		fmt.Sscan(m[2], &v.Done)
		fmt.Sscan(m[3], &v.Total)
		return v, lens
	}
	m := lensCounts.FindStringSubmatch(lens)
	if m == nil {
		l.t.Fatalf("lens of %s: %s", id, lens)
	}
	fmt.Sscan(m[1], &v.Done)
	fmt.Sscan(m[2], &v.Total)
	switch last := lensLast.FindStringSubmatch(lens); {
	case v.Next == "review" || v.Next == "open-pr" || v.Next == "address-review":
		v.State = "completed"
	case last != nil && last[1] != "completed":
		v.State = last[1]
	default:
		v.State = "pending"
	}
	if c := regexp.MustCompile(`(\d+)/(\d+) tasks done · status: completed \(on `).FindStringSubmatch(lens); c != nil {
		fmt.Sscan(c[1], &v.Done)
		fmt.Sscan(c[2], &v.Total)
	}
	return v, lens
}

// followEnd is `follow <story> --format json` of an ended run: its last
// worker.end's status, or for a run on GitHub Actions the story's state
// its conclusion means; "" when there is no run to follow.
func (l *life) followEnd(id string) string {
	l.t.Helper()
	res := l.saga("follow", id, "--format", "json")
	end := ""
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	for {
		var e struct{ Event, Status, Conclusion string }
		if dec.Decode(&e) != nil {
			break
		}
		switch {
		case e.Event == "worker.end":
			end = e.Status
		case e.Event == "" && e.Status == "completed":
			end = map[string]string{"success": "completed", "cancelled": "stopped", "timed_out": "timeout"}[e.Conclusion]
			if end == "" {
				end = "failed"
			}
		}
	}
	return end
}

// checkFailed tells whether the last publishDiagnostics the server sent
// for the file holds a failed check of the last run.
func (l *life) checkFailed(rel string) bool {
	uri := l.root + "/" + rel
	found := false
	for _, m := range l.server.Notes(0) {
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p struct {
			URI         string
			Diagnostics []struct{ Message string }
		}
		if json.Unmarshal(m.Params, &p) != nil || p.URI != uri {
			continue
		}
		found = false
		for _, d := range p.Diagnostics {
			if strings.Contains(d.Message, "check failed in the last run") {
				found = true
			}
		}
	}
	return found
}

// inBrowser waits until the story's page, open in a real browser since the
// story's first look and updated by the page itself (its event stream),
// shows what status says: the state (a pending story of an epic may be
// worded waiting, ready or held, as its epic says), the counts and the
// next step's action.
func (l *life) inBrowser(step, id string, want said) {
	l.t.Helper()
	b := l.pages[id]
	if b == nil {
		b = browser.New(l.t)
		b.Do(chromedp.Navigate(l.dash)) // the token, as a cookie
		b.Do(chromedp.Navigate(l.storyPageURL(&http.Client{Timeout: 30 * time.Second}, id)))
		b.WaitJS("window.sagaDashboard && window.sagaDashboard.connected", 30*time.Second)
		l.pages[id] = b
	}
	states := []string{want.State}
	if want.State == "pending" {
		states = append(states, "waiting", "ready", "held")
	}
	l.t.Logf("%s: %s: the page in the browser", step, id)
	b.WaitJS(fmt.Sprintf(`(() => { const f = document.querySelector('#story-facts'), n = document.querySelector('#story-next');
		return !!f && !!n && %s.includes(f.dataset.state) && +f.dataset.done === %d && +f.dataset.total === %d && n.dataset.action === %q; })()`,
		mustJSON(states), want.Done, want.Total, want.Next), 30*time.Second)
}

// storyFaces compares every face's word on a story with `status`'s,
// waiting for the open faces (dashboard, server) to settle on it.
func (l *life) storyFaces(step, id string, from int) said {
	t := l.t
	t.Helper()
	t.Logf("%s: %s", step, id)
	want, text := l.storyStatus(id)
	if !strings.Contains(text, fmt.Sprintf("%d/%d", want.Done, want.Total)) || !strings.Contains(text, want.State) {
		t.Errorf("%s: %s: status text does not say %+v:\n%s", step, id, want, text)
	}
	var dash said
	testkit.WaitUntil(30*time.Second, func() bool {
		dash = said(l.fromDashboardStory(id))
		// The story page of a story whose epic ran words a pending story
		// as its epic does (status <epic>: waiting, ready, held).
		if want.State == "pending" && (dash.State == "waiting" || dash.State == "ready" || dash.State == "held") {
			dash.State = "pending"
		}
		return dash == want
	})
	if dash != want {
		t.Errorf("%s: %s: dashboard's story page %+v, status %+v", step, id, dash, want)
	}
	l.inBrowser(step, id, want)
	var lens said
	var lensText string
	testkit.WaitUntil(30*time.Second, func() bool {
		lens, lensText = l.storyLens(id)
		return lens == want
	})
	if lens != want {
		t.Errorf("%s: %s: lens %+v (%s), status %+v", step, id, lens, lensText, want)
	}
	if want.State == "running" {
		return want // follow would follow it to its end
	}
	// follow has nothing to say once clean removed the run's files.
	if end := l.followEnd(id); want.State != "pending" && end != "" && end != want.State {
		t.Errorf("%s: %s: follow --format json ended %q, status %+v", step, id, end, want)
	}
	if end := l.workerEnd(id, from); end != "" && end != want.State {
		t.Errorf("%s: %s: the server's last saga/workerProgress ended %q, status %+v", step, id, end, want)
	}
	return want
}

// epicFaces compares every face's word on the epic's stories with
// `status <epic> --format json`'s: status's text, plan, the dashboard's
// epic page, the server's lenses on the epic's children and on each
// story, and the last saga/epicProgress for it when the server sent one
// since mark.
func (l *life) epicFaces(step, epic string, notifsFrom int) {
	t := l.t
	t.Helper()
	t.Logf("%s: %s", step, epic)
	res := l.saga("status", epic, "--format", "json")
	var out struct {
		Epic struct {
			Done, Total int
			Stories     []struct {
				ID, State, Base string
				Done, Total     int
				Next            struct{ Action string }
			}
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("status %s --format json: %v\n%s\n%s", epic, err, res.Stdout, res.Stderr)
	}
	want := map[string]storyView{}
	wantNext := map[string]string{} // compared with the lenses, which offer it
	var completed []string
	for _, s := range out.Epic.Stories {
		want[s.ID] = storyView{State: s.State, Done: s.Done, Total: s.Total}
		wantNext[s.ID] = s.Next.Action
		if s.State == "completed" {
			completed = append(completed, s.ID)
		}
	}
	text := l.saga("status", epic).Stdout
	if !strings.Contains(text, fmt.Sprintf("%d/%d", out.Epic.Done, out.Epic.Total)) {
		t.Errorf("%s: status %s text does not say %d/%d:\n%s", step, epic, out.Epic.Done, out.Epic.Total, text)
	}
	var plan struct{ Completed []string }
	if err := json.Unmarshal([]byte(l.ok("plan", epic, "--format", "json").Stdout), &plan); err != nil {
		t.Fatal(err)
	}
	slices.Sort(plan.Completed)
	slices.Sort(completed)
	if !slices.Equal(plan.Completed, completed) {
		t.Errorf("%s: plan's completed %v, status's %v", step, plan.Completed, completed)
	}
	var dash map[string]storyView
	testkit.WaitUntil(30*time.Second, func() bool {
		dash = l.fromDashboard(epic)
		return fmt.Sprint(dash) == fmt.Sprint(want)
	})
	if fmt.Sprint(dash) != fmt.Sprint(want) {
		t.Errorf("%s: dashboard's epic page %v, status %v", step, dash, want)
	}
	for id, w := range want {
		switch w.State {
		case "completed", "failed", "stopped", "running":
		default:
			continue // waiting, ready, held: the epic's words alone
		}
		w.Next = wantNext[id]
		var lens said
		var lensText string
		testkit.WaitUntil(30*time.Second, func() bool {
			lens, lensText = l.storyLens(id)
			return lens == said(w)
		})
		if lens != said(w) {
			t.Errorf("%s: %s: the story's lens %+v (%s), status <epic> %+v", step, id, lens, lensText, w)
		}
	}
	for _, m := range slices.Backward(l.server.Notes(notifsFrom)) {
		if m.Method != "saga/epicProgress" {
			continue
		}
		var p struct {
			Epic    string
			DryRun  bool
			Stories []struct {
				ID, State   string
				Done, Total int
			}
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Epic != epic || p.DryRun {
			continue // a dry run's progress is its own schedule's (docs/worker.md#dry-runs)
		}
		for _, s := range p.Stories {
			if got := (storyView{State: s.State, Done: s.Done, Total: s.Total}); got != want[s.ID] {
				t.Errorf("%s: %s: saga/epicProgress %+v, status %+v", step, s.ID, got, want[s.ID])
			}
		}
		break
	}
}

func (l *life) mark() int { return l.server.Mark() }

// workerEnd is the state of the story's last ended saga/workerProgress
// since from ("" when none).
func (l *life) workerEnd(id string, from int) string {
	for _, m := range slices.Backward(l.server.Notes(from)) {
		var p struct {
			Story, State string
			Ended        bool
		}
		if m.Method == "saga/workerProgress" && json.Unmarshal(m.Params, &p) == nil && p.Story == id && p.Ended {
			return p.State
		}
	}
	return ""
}

// TestViewsAgreeThroughALife drives one repository through a scripted
// life — a dry run of the epic, a real run of a story whose check fails, a
// fix on main and the rerun, a run stopped, its reset, clean, and a story
// run on GitHub Actions (the stand-in) — and after every step reads every
// face: status (text and JSON), plan, follow --format json, the language
// server open all along (lenses, diagnostics, saga/* notifications) and
// the dashboard's pages. They must say the same (issue 31).
func TestViewsAgreeThroughALife(t *testing.T) {
	testkit.Bwrap(t) // checks run confined
	l := newLife(t)
	const epic, story, slow = "user-auth", "add-logout-button", "user-auth--api"
	check := ".saga/stories/" + story + "/write-tests.json"

	// 1. A dry run of the epic.
	m := l.mark()
	l.ok("run", epic, "--dry-run", "--follow")
	l.epicFaces("after the epic's dry run", epic, m)

	// 2. A real run of a story whose check fails.
	l.commitOnMain(check, `{"id": "write-tests", "subject": "Write tests for the logout button", "description": "Template tests.", "status": "pending", "blockedBy": [], "checks": ["test -f logout.ok"]}`+"\n", "write-tests: a check")
	m = l.mark()
	if res := l.saga("run", story, "--follow", "--max-check-failures", "1"); res.Code == 0 {
		t.Fatalf("the run with a failing check ended 0:\n%s%s", res.Stdout, res.Stderr)
	}
	if st := l.storyFaces("after the failing check", story, m); st.State != "failed" {
		t.Errorf("after the failing check, status says %+v", st)
	}
	if !testkit.WaitUntil(30*time.Second, func() bool { return l.checkFailed(check) }) {
		t.Errorf("the server never published the failed check's diagnostic on %s", check)
	}

	// 3. The fix on main, and the rerun.
	l.commitOnMain(check, `{"id": "write-tests", "subject": "Write tests for the logout button", "description": "Template tests.", "status": "pending", "blockedBy": [], "checks": ["true"]}`+"\n", "write-tests: a check that passes")
	m = l.mark()
	l.ok("run", story, "--follow")
	if st := l.storyFaces("after the fix and the rerun", story, m); st.State != "completed" {
		t.Errorf("after the rerun, status says %+v", st)
	}
	if !testkit.WaitUntil(30*time.Second, func() bool { return !l.checkFailed(check) }) {
		t.Errorf("the failed check's diagnostic on %s outlived the rerun", check)
	}

	// 4. A run stopped while it runs.
	m = l.mark()
	env := l.env
	l.env = append(slices.Clone(env), "SAGA_STANDIN_SCRIPT=slow", "SAGA_STANDIN_DELAY_MS=600000")
	l.ok("run", slow)
	l.env = env
	if !testkit.WaitUntil(60*time.Second, func() bool { st, _ := l.storyStatus(slow); return st.State == "running" }) {
		t.Fatalf("%s never ran", slow)
	}
	l.storyFaces("while it runs", slow, m)
	l.ok("stop", slow)
	if st := l.storyFaces("after stop", slow, m); st.State != "stopped" {
		t.Errorf("after stop, status says %+v", st)
	}
	l.epicFaces("after stop", epic, l.mark())

	// 5. Its reset.
	m = l.mark()
	l.ok("reset", "user-auth--login-page", "--yes") // its dry attempt is built on the story's
	l.ok("reset", slow, "--yes")
	if st := l.storyFaces("after reset", slow, m); st.State != "pending" {
		t.Errorf("after reset, status says %+v", st)
	}
	l.epicFaces("after reset", epic, l.mark())

	// 6. clean.
	m = l.mark()
	l.ok("clean", "--yes")
	l.storyFaces("after clean", story, m)
	l.epicFaces("after clean", epic, l.mark())

	// 7. A story on GitHub Actions: dispatched, then followed to its end.
	m = l.mark()
	l.ok("run", slow, "--on", "github", "--follow")
	// Whoever asked GitHub recorded what it saw: the open server shows the
	// end before any `status` asks again.
	var lens said
	var lensText string
	if !testkit.WaitUntil(30*time.Second, func() bool { lens, lensText = l.storyLens(slow); return lens.State == "completed" }) {
		t.Errorf("after its run on GitHub, before status: the open server's lens %+v (%s)", lens, lensText)
	}
	if st := l.storyFaces("after its run on GitHub", slow, m); st.State != "completed" {
		t.Errorf("after the run on GitHub, status says %+v", st)
	}
	l.epicFaces("after the run on GitHub", epic, l.mark())
	// status renders what its network step recorded: without GitHub, it
	// says the same of the story (its state, counts, branch, base, PR).
	type line struct {
		State, Branch, PR string
		Done, Total       int
	}
	statusLine := func(more ...string) line {
		t.Helper()
		env := l.env
		l.env = append(slices.Clone(env), more...)
		defer func() { l.env = env }()
		res := l.saga("status", slow, "--format", "json")
		var out struct{ Stories []line }
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil || len(out.Stories) != 1 {
			t.Fatalf("status: %v\n%s%s", err, res.Stdout, res.Stderr)
		}
		return out.Stories[0]
	}
	online, offline := statusLine(), statusLine("SAGA_GH="+filepath.Join(t.TempDir(), "no-gh"))
	if online != offline || online.PR == "" {
		t.Errorf("status asking GitHub %+v, without it %+v", online, offline)
	}
}
