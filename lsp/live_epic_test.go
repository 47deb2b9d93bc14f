//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// The epic tests drive the server over pipes while the real epic runner
// runs a small epic (testdata/epicrun: shop--a, then shop--b after it, and
// shop--c alone) in a private tmux server: with the simulated agent
// (dryRun), or with the stand-in claude scripted per story
// (SAGA_STANDIN_SCRIPTS) to fail or go slowly.

const epicRel = ".saga/epics/shop/epic.json"

func newEpicFixture(t *testing.T, scripts string, delayMS int) *liveFixture {
	t.Helper()
	f := newLiveFixtureOf(t, "testdata/epicrun", "all", delayMS)
	t.Setenv("SAGA_STANDIN_SCRIPTS", scripts)
	return f
}

func epicNotes(c *client, from int) []epicProgressParams {
	return notesAs[epicProgressParams](c, from, "saga/epicProgress")
}

// waitEpic waits for a saga/epicProgress matching pred: at most runBound,
// as it may be the run's end.
func waitEpic(c *client, from int, pred func(epicProgressParams) bool) epicProgressParams {
	c.t.Helper()
	var got epicProgressParams
	c.waitForWithin(runBound, from, "saga/epicProgress", func(raw json.RawMessage) bool {
		var p epicProgressParams
		if json.Unmarshal(raw, &p) != nil || !pred(p) {
			return false
		}
		got = p
		return true
	})
	return got
}

func epicEnded(p epicProgressParams) bool { return p.State != runs.StateRunning }

// runEpicFromLens runs the epic's "▶ Run epic" lens with extra arguments.
func runEpicFromLens(c *client, extra map[string]any) readmodel.Started {
	c.t.Helper()
	raw := execLens(c, epicRel, "▶ Run epic", extra)
	var res readmodel.Started
	var fields map[string]any
	json.Unmarshal(raw, &fields)
	if json.Unmarshal(raw, &res) != nil || res.Session == "" ||
		!slices.Equal(slices.Sorted(maps.Keys(fields)), []string{"epic", "eventsFile", "outputFile", "pid", "session"}) {
		c.t.Fatalf("runEpic result %s, want {epic, session, outputFile, eventsFile, pid}", raw)
	}
	return res
}

// epicProgressKinds returns the kinds of the work-done progress titled
// "SAGA epic <epic>", and its messages.
func epicProgressKinds(c *client, from int, epic string) (kinds []string, msgs []string, token string) {
	type value struct {
		Kind        string `json:"kind"`
		Title       string `json:"title"`
		Cancellable bool   `json:"cancellable"`
		Message     string `json:"message"`
	}
	for _, n := range c.notesOf(from, "$/progress") {
		var p struct {
			Token string `json:"token"`
			Value value  `json:"value"`
		}
		json.Unmarshal(n.Params, &p)
		if p.Value.Kind == "begin" && p.Value.Title == "SAGA epic "+epic {
			if !p.Value.Cancellable {
				c.t.Errorf("epic progress begin not cancellable: %+v", p.Value)
			}
			token = p.Token
		}
		if token != "" && p.Token == token {
			kinds = append(kinds, p.Value.Kind)
			msgs = append(msgs, p.Value.Message)
		}
	}
	return kinds, msgs, token
}

// TestRunEpicLive: the "▶ Run epic" lens's command runs the epic with the
// stand-in claude; the editor follows it to completed: saga/epicProgress
// from running to completed (never two alike in a row, done never falling,
// at most maxParallel stories at once), a cancellable work-done progress,
// the lenses of every child, the review of a stacked story, the plan with
// its states. A second server started afterwards shows the finished run
// without announcing it.
func TestRunEpicLive(t *testing.T) {
	// The stand-in claude, slow enough that each story runs across more
	// than one of the server's 250 ms derivations: the editor sees it
	// running however fast the machine is.
	f := newEpicFixture(t, "", 300)
	t.Setenv("SAGA_STANDIN_SCRIPT", "slow")
	c := startLive(t, f.root)
	if got := lensTitles(codeLenses(c, epicRel)); !slices.Equal(got, []string{"▶ Run epic", "0/3 stories done",
		"○ ready", "▶ Run", "○ waiting", "▶ Run", "○ ready", "▶ Run"}) {
		t.Errorf("lenses before the run: %q", got)
	}
	from := c.mark()
	res := runEpicFromLens(c, map[string]any{"maxParallel": 2})
	if res.Epic != "shop" || !strings.HasPrefix(res.Session, "saga-epic-shop-") || res.PID <= 0 ||
		res.OutputFile != filepath.Join(f.sessionDir, res.Session+".log") || res.EventsFile != res.OutputFile+".events.jsonl" {
		t.Errorf("runEpic result %+v", res)
	}
	final := waitEpic(c, from, epicEnded)
	if final.State != runs.StatusCompleted || final.Done != 3 || final.Total != 3 || len(final.Running) != 0 ||
		len(final.Held) != 0 || len(final.Failed) != 0 || final.Session != res.Session {
		t.Fatalf("final epicProgress %+v\noutput:\n%s", final, testkit.FileText(res.OutputFile))
	}
	for _, s := range final.Stories {
		if s.State != runs.StatusCompleted || s.Done != s.Total || s.Total == 0 {
			t.Errorf("final story %+v", s)
		}
	}
	if ids := storyIDs(final.Stories); !slices.Equal(ids, []string{"shop--a", "shop--c", "shop--b"}) {
		t.Errorf("stories %v, want plan order (a and c, then b)", ids)
	}

	ps := epicNotes(c, from)
	if len(ps) < 2 || ps[0].State != runs.StateRunning {
		t.Fatalf("epicProgress sequence %+v", ps)
	}
	sawRunning := false
	for i, p := range ps {
		t.Logf("epicProgress %s %d/%d running %v %+v", p.State, p.Done, p.Total, p.Running, p.Stories)
		if p.Epic != "shop" || p.Session != res.Session || p.Total != 3 {
			t.Errorf("#%d names another run: %+v", i, p)
		}
		if len(p.Running) > 2 {
			t.Errorf("#%d: %d stories at once, maxParallel is 2", i, len(p.Running))
		}
		sawRunning = sawRunning || len(p.Running) > 0
		if i > 0 {
			if p.Done < ps[i-1].Done {
				t.Errorf("done fell at #%d: %+v", i, p)
			}
			a, _ := json.Marshal(p)
			b, _ := json.Marshal(ps[i-1])
			if string(a) == string(b) {
				t.Errorf("#%d repeats #%d: %s", i, i-1, a)
			}
		}
		if i < len(ps)-1 && epicEnded(p) {
			t.Errorf("#%d ended before the last: %+v", i, p)
		}
	}
	if !sawRunning {
		t.Error("no epicProgress listed a running story")
	}

	// The epic's work-done progress: begun, reported, ended with the result.
	c.waitFor(from, "$/progress", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"kind":"end"`) && strings.Contains(string(p), "3/3 stories")
	})
	kinds, msgs, _ := epicProgressKinds(c, from, "shop")
	if len(kinds) < 2 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || msgs[len(msgs)-1] != "completed · 3/3 stories" {
		t.Errorf("epic progress %v %q", kinds, msgs)
	}

	// Lenses: refreshed during the run; every child completed, the run's
	// result on the id.
	c.waitFor(from, "workspace/codeLens/refresh", nil)
	want := []string{"▶ Run epic", "3/3 stories done · last run: completed", "✓ completed", "▶ Run", "✓ completed", "▶ Run", "✓ completed", "▶ Run"}
	if !testkit.WaitUntil(20*time.Second, func() bool { return slices.Equal(lensTitles(codeLenses(c, epicRel)), want) }) {
		t.Errorf("lenses after the run: %q, want %q", lensTitles(codeLenses(c, epicRel)), want)
	}

	// Review: shop--b was stacked on story/shop--a; only its own work shows.
	m := c.execCommand("saga.reviewStory", []any{map[string]string{"story": "shop--b"}})
	if m.Error != nil {
		t.Fatalf("reviewStory: %+v", m.Error)
	}
	var rev control.Review
	json.Unmarshal(m.Result, &rev)
	paths := map[string]string{}
	for _, fc := range rev.Files {
		paths[fc.Path] = fc.Status
	}
	if rev.Branch != "story/shop--b" || rev.Base != "story/shop--a" || paths["saga-work/shop--b/b1.md"] != "added" ||
		paths["saga-work/shop--a/a1.md"] != "" || rev.Worktree != filepath.Join(f.root, ".saga/worktrees/shop--b") {
		t.Errorf("reviewStory shop--b: %s", m.Result)
	}

	// The plan of the epic: its states drawn, nothing left on the critical path.
	m = c.execCommand("saga.showPlan", []any{map[string]string{"epic": "shop"}})
	var pr planResult
	if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil {
		t.Fatalf("showPlan: %s %+v", m.Result, m.Error)
	}
	if pr.Kind != "epic" || pr.States["shop--b"] != "completed" || len(pr.CriticalPath) != 0 ||
		!strings.Contains(pr.Text, "runner completed (session "+res.Session+")") || !strings.HasPrefix(pr.Mermaid, "flowchart TD") {
		t.Errorf("showPlan shop: %+v", pr)
	}

	// A server started now finds the finished run: the lenses say how it
	// ended, and nothing is announced.
	c2 := startLive(t, f.root)
	if got := lensTitles(codeLenses(c2, epicRel)); !slices.Equal(got, want) {
		t.Errorf("a new server's lenses: %q", got)
	}
	if n := c2.notesOf(0, "saga/epicProgress"); len(n) != 0 {
		t.Errorf("a finished run was announced: %s", n[0].Params)
	}
}

func storyIDs(ss []epicStoryParams) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// TestEpicHeldLive: a story that fails holds its dependent and not the
// independent one; the editor sees it in saga/epicProgress, the lenses and
// a story-held diagnostic on the dependent's entry naming the blocker.
func TestEpicHeldLive(t *testing.T) {
	f := newEpicFixture(t, "shop--a=crash", 0)
	c := startLive(t, f.root)
	from := c.mark()
	m := c.execCommand("saga.runEpic", []any{"shop"})
	if m.Error != nil {
		t.Fatalf("runEpic: %+v", m.Error)
	}
	final := waitEpic(c, from, epicEnded)
	if final.State != runs.StatusFailed || final.Done != 1 || !slices.Equal(final.Failed, []string{"shop--a"}) ||
		!slices.Equal(final.Held, []string{"shop--b"}) {
		t.Fatalf("final epicProgress %+v", final)
	}
	for _, s := range final.Stories {
		if s.ID == "shop--b" && !slices.Equal(s.HeldBy, []string{"shop--a"}) {
			t.Errorf("shop--b held by %v", s.HeldBy)
		}
	}
	pd, _ := c.diagnostics(from, epicRel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-held") })
	text := testkit.FileText(filepath.Join(c.root, epicRel))
	for _, d := range pd.Diagnostics {
		if d.Code != "story-held" {
			continue
		}
		if d.Severity != 3 || d.Range != spanOf(t, text, `"shop--b"`, 0) ||
			!strings.Contains(d.Message, "story shop--b is held: its blocker shop--a failed") {
			t.Errorf("story-held %+v", d)
		}
	}
	want := []string{"▶ Run epic", "1/3 stories done · last run: failed", "✗ failed", "▶ Run", "⏸ held by shop--a", "▶ Run", "✓ completed", "▶ Run"}
	if !testkit.WaitUntil(20*time.Second, func() bool { return slices.Equal(lensTitles(codeLenses(c, epicRel)), want) }) {
		t.Errorf("lenses after the run: %q, want %q", lensTitles(codeLenses(c, epicRel)), want)
	}
}

// startSlowEpic runs the epic with the stand-in claude going slowly, from
// the lens, until a story runs.
func startSlowEpic(t *testing.T) (c *client, from int, res readmodel.Started) {
	t.Helper()
	f := newEpicFixture(t, "", 400)
	t.Setenv("SAGA_STANDIN_SCRIPT", "slow")
	c = startLive(t, f.root)
	from = c.mark()
	res = runEpicFromLens(c, nil)
	waitEpic(c, from, func(p epicProgressParams) bool { return len(p.Running) > 0 })
	return c, from, res
}

// TestStopEpicLive: stopEpic in the middle of a run stops the runner and
// its workers; the run ends stopped; the lenses offer ▶ Run epic again.
func TestStopEpicLive(t *testing.T) {
	c, from, res := startSlowEpic(t)
	waitEpic(c, from, func(p epicProgressParams) bool { return len(p.Running) == 2 })
	got := lensTitles(codeLenses(c, epicRel))
	if len(got) != 8 || got[0] != "■ Stop epic" || !strings.HasPrefix(got[1], "● 0/3 stories done · ") ||
		!strings.HasPrefix(got[2], "● running ") || got[3] != "■ Stop" {
		t.Errorf("lenses while running: %q", got)
	}
	m := c.execCommand("saga.stopEpic", []any{map[string]string{"epic": "shop"}})
	if m.Error != nil || !strings.Contains(string(m.Result), `"stopped":true`) || !strings.Contains(string(m.Result), `"epic":"shop"`) {
		t.Fatalf("stopEpic: %s %+v", m.Result, m.Error)
	}
	final := waitEpic(c, from, epicEnded)
	if final.State != runs.StatusStopped || final.Session != res.Session || len(final.Running) != 0 {
		t.Errorf("final epicProgress %+v", final)
	}
	if !testkit.WaitUntil(20*time.Second, func() bool { return lensTitles(codeLenses(c, epicRel))[0] == "▶ Run epic" }) {
		t.Errorf("lenses after stop: %q", lensTitles(codeLenses(c, epicRel)))
	}

	// Run again: the stopped stories resume, the run completes, and it is
	// announced from its start with a progress of its own.
	again := c.mark()
	res2 := runEpicFromLens(c, map[string]any{"dryRun": true})
	if final := waitEpic(c, again, epicEnded); final.State != runs.StatusCompleted || final.Session != res2.Session || final.Done != 3 {
		t.Errorf("the second run: %+v", final)
	}
	if ps := epicNotes(c, again); ps[0].Session != res2.Session || ps[0].State != runs.StateRunning {
		t.Errorf("the second run's first epicProgress %+v", ps[0])
	}
	c.waitFor(again, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), "completed · 3/3 stories") })
	if kinds, _, _ := epicProgressKinds(c, again, "shop"); len(kinds) < 2 || kinds[0] != "begin" {
		t.Errorf("the second run's progress: %v", kinds)
	}
}

// TestCancelEpicProgress: cancelling the epic's work-done progress stops
// the epic.
func TestCancelEpicProgress(t *testing.T) {
	c, from, _ := startSlowEpic(t)
	c.waitFor(from, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"SAGA epic shop"`) })
	_, _, token := epicProgressKinds(c, from, "shop")
	c.notify("window/workDoneProgress/cancel", fmt.Sprintf(`{"token":%q}`, token))
	if final := waitEpic(c, from, epicEnded); final.State != runs.StatusStopped {
		t.Errorf("after cancel: %+v", final)
	}
}

// TestEpicRunnerKilled: a runner killed with SIGKILL writes no end; the
// editor sees it die.
func TestEpicRunnerKilled(t *testing.T) {
	c, from, res := startSlowEpic(t)
	if err := syscall.Kill(res.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if final := waitEpic(c, from, epicEnded); final.State != "died" || final.Session != res.Session {
		t.Errorf("after SIGKILL: %+v", final)
	}
	// Its progress ends saying so.
	c.waitFor(from, "$/progress", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"kind":"end"`) && strings.Contains(string(p), "died · ")
	})
}

// TestEpicFromTerminal: a run started in a terminal (`saga-lsp run <epic>`)
// is followed like the editor's own.
func TestEpicFromTerminal(t *testing.T) {
	f := newEpicFixture(t, "", 0)
	c := startLive(t, f.root)
	from := c.mark()
	r := testkit.Run(t, f.root, os.Environ(), "", testkit.Binary(t), "run", "shop", "--dry-run", "--format", "json")
	if r.Code != 0 {
		t.Fatalf("saga-lsp run shop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	final := waitEpic(c, from, epicEnded)
	if final.State != runs.StatusCompleted || final.Done != 3 || !strings.Contains(r.Stdout, final.Session) {
		t.Errorf("final epicProgress %+v; run printed %s", final, r.Stdout)
	}
	if n := len(epicNotes(c, from)); n < 2 {
		t.Errorf("%d epicProgress notifications: the run was not followed from its start", n)
	}
}

// TestShowPlanStoryOrEpic: showPlan takes "story" or "epic"; a bare name
// that is both is refused, asking for one of them.
func TestShowPlanStoryOrEpic(t *testing.T) {
	root := copyTestdata(t, "epicrun")
	dir := filepath.Join(root, ".saga/stories/shop")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "story.json"), []byte(`{"id": "shop", "title": "A story named like the epic", "description": ""}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t1.json"), []byte(`{"id": "t1", "subject": "Do t1", "description": "", "status": "pending", "blockedBy": []}`+"\n"), 0o644)
	c := start(t)
	c.initializeWith(root, "{}", `{"sagaNotifications":true}`)
	for _, args := range []any{[]any{"shop"}, []any{map[string]string{"name": "shop"}}} {
		m := c.execCommand("saga.showPlan", args)
		if m.Error == nil || m.Error.Code != codeInvalidParams || !strings.Contains(m.Error.Message, `"shop" is both a story and an epic: pass [{"story": "shop"}] or [{"epic": "shop"}]`) {
			t.Errorf("showPlan %v: %s %+v", args, m.Result, m.Error)
		}
	}
	var pr planResult
	c.result("workspace/executeCommand", `{"command":"saga.showPlan","arguments":[{"story":"shop"}]}`, &pr)
	if pr.Kind != "story" || pr.States["t1"] != "pending" || !slices.Equal(pr.CriticalPath, []string{"t1"}) {
		t.Errorf("showPlan story: %+v", pr)
	}
	c.result("workspace/executeCommand", `{"command":"saga.showPlan","arguments":[{"epic":"shop"}]}`, &pr)
	if pr.Kind != "epic" || pr.States["shop--a"] != "ready" || pr.States["shop--b"] != "waiting" ||
		!slices.Equal(pr.CriticalPath, []string{"shop--a", "shop--b"}) || !strings.Contains(pr.Text, "shop--b waiting") ||
		!strings.Contains(pr.Mermaid, "shop--b") {
		t.Errorf("showPlan epic: %+v", pr)
	}
}
