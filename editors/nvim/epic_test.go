package nvim_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// epicResult is what test/epic.lua writes.
type epicResult struct {
	scriptResult
	EpicProgress []struct {
		Ms         int      `json:"ms"`
		Epic       string   `json:"epic"`
		State      string   `json:"state"`
		Done       int      `json:"done"`
		Total      int      `json:"total"`
		Running    []string `json:"running"`
		Held       []string `json:"held"`
		Failed     []string `json:"failed"`
		Statusline string   `json:"statusline"`
	} `json:"epic_progress"`
	Run *struct {
		State           string   `json:"state"`
		Lenses          []string `json:"lenses"`
		LensAfter       string   `json:"lens_after"`
		StatuslineAfter string   `json:"statusline_after"`
	} `json:"run"`
	Plan *struct {
		Lines []string `json:"lines"`
	} `json:"plan"`
	Review *struct {
		Title        string `json:"title"`
		QuickfixOpen bool   `json:"quickfix_open"`
		Items        []struct {
			File string `json:"file"`
			Text string `json:"text"`
		} `json:"items"`
	} `json:"review"`
	NeedsYou *struct {
		From      int    `json:"from"`
		State     string `json:"state"`
		LensAfter string `json:"lens_after"`
	} `json:"needs_you"`
	Stop *struct {
		StatuslineRunning string `json:"statusline_running"`
		State             string `json:"state"`
		Message           string `json:"message"`
		StatuslineAfter   string `json:"statusline_after"`
	} `json:"stop"`
}

// TestPluginEpic runs test/epic.lua against the real server on a git copy
// of testdata/epics, with tmux on a private socket and the stand-in claude
// scripted per story: :SagaRun! site (the simulated agent) to completed with
// the statusline and lenses following, :SagaPlan site with the run states,
// :SagaReview site--about in the quickfix list, :SagaRun shop with its
// failed, held and blocked stories each warned about once, :SagaRun slow
// stopped with :SagaStop slow.
func TestPluginEpic(t *testing.T) {
	ws := testkit.GitRepo(t, "testdata/epics")
	var res epicResult
	partErr := runScript(t, "epic.lua", ws, 180*time.Second, []string{
		"SAGA_CLAUDE=" + testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_STANDIN_SCRIPTS=shop--a=crash,shop--c=blocker,slow--a=slow",
		"SAGA_STANDIN_DELAY_MS=300",
	}, &res)
	for _, p := range res.EpicProgress {
		t.Logf("epicProgress @%dms %s %s %d/%d running %v held %v failed %v | statusline %q", p.Ms, p.Epic, p.State, p.Done, p.Total, p.Running, p.Held, p.Failed, p.Statusline)
	}

	t.Run("run", func(t *testing.T) {
		partErr(t, "run")
		r := res.Run
		if r.State != "completed" {
			t.Fatalf("site ended %q, want completed", r.State)
		}
		// The statusline showed the running epic: "SAGA site 0/2 ▶1" (how many
		// run when a notification comes depends on the simulated agent's
		// speed; the stop part shows ▶ counting a story that runs).
		running := regexp.MustCompile(`^SAGA site [0-2]/2 ▶[0-2]$`)
		saw := false
		for _, p := range res.EpicProgress {
			saw = saw || (p.Epic == "site" && running.MatchString(p.Statusline))
		}
		if !saw {
			t.Error("the statusline never showed the running epic site (want e.g. \"SAGA site 0/2 ▶1\")")
		}
		if r.StatuslineAfter != "" {
			t.Errorf("statusline after the run %q, want empty", r.StatuslineAfter)
		}
		// The lenses followed: ▶ Run epic and "○ ready" before, ■ Stop epic or a
		// running story during, ✓ completed for both after.
		for i, l := range r.Lenses {
			t.Logf("lenses #%d: %s", i, l)
		}
		run, ready := -1, -1
		for i, l := range r.Lenses {
			if run < 0 && strings.Contains(l, "■ Stop epic") && strings.Contains(l, "● running") {
				run = i
			}
			if ready < 0 && strings.Contains(l, "▶ Run epic") && strings.Contains(l, "○ ready") {
				ready = i
			}
		}
		if ready < 0 || run < ready {
			t.Errorf("the lenses did not go from ▶ Run epic and ○ ready to ■ Stop epic and ● running")
		}
		// A dry run: the stories keep their own states (docs/worker.md#dry-runs).
		if strings.Contains(r.LensAfter, "✓ completed") || !strings.Contains(r.LensAfter, "0/2 stories done · last run: a dry run, completed (simulated)") ||
			!strings.Contains(r.LensAfter, "○ ready") {
			t.Errorf("lenses after the run: %q", r.LensAfter)
		}
	})

	t.Run("plan", func(t *testing.T) {
		partErr(t, "plan")
		text := strings.Join(res.Plan.Lines, "\n")
		t.Logf(":SagaPlan site:\n%s", text)
		if !strings.Contains(text, "EXECUTION PLAN") || !strings.Contains(text, "last run: a dry run, completed") ||
			!regexp.MustCompile(`site--about +waiting .*dry run completed`).MatchString(text) {
			t.Error(":SagaPlan site does not show the plan and each story's run state")
		}
	})

	t.Run("review", func(t *testing.T) {
		partErr(t, "review")
		r := res.Review
		// :SagaRun! site was a dry run: what it did is on the dry branches,
		// stacked alike (docs/worker.md#dry-runs).
		if r.Title != "saga review site--about: saga-dry/site--about against saga-dry/site--home" || !r.QuickfixOpen {
			t.Errorf("quickfix title %q, open %v", r.Title, r.QuickfixOpen)
		}
		found := false
		for _, it := range r.Items {
			t.Logf("quickfix %s: %s", it.File, it.Text)
			if it.File == filepath.Join(ws, ".saga/worktrees/site--about.dry/saga-work/site--about/about1.md") && it.Text == "added" {
				found = true
			}
			if strings.Contains(it.File, "home1.md") {
				t.Errorf("site--home's work is in the review of site--about: %s", it.File)
			}
		}
		if !found {
			t.Error("no quickfix entry for the added saga-work/site--about/about1.md in site--about's worktree")
		}
	})

	t.Run("needs-you", func(t *testing.T) {
		partErr(t, "needs_you")
		r := res.NeedsYou
		if r.State != "failed" {
			t.Fatalf("shop ended %q, want failed", r.State)
		}
		want := map[string]*regexp.Regexp{
			"failed":  regexp.MustCompile(`^saga: shop--a failed — :SagaOutput shop--a shows why`),
			"held":    regexp.MustCompile(`^saga: shop--b is held by shop--a \(failed\)`),
			"blocked": regexp.MustCompile(`^saga: shop--c is blocked`),
		}
		count := map[string]int{}
		for _, n := range res.Notifications[r.From:] {
			if n.Level != 3 { // vim.log.levels.WARN
				continue
			}
			matched := false
			for k, re := range want {
				if re.MatchString(n.Msg) {
					count[k]++
					matched = true
				}
			}
			if !matched {
				t.Errorf("an unexpected warning: %q", n.Msg)
			}
		}
		for k := range want {
			if count[k] != 1 {
				t.Errorf("%d %s warnings, want exactly 1", count[k], k)
			}
		}
		for _, want := range []string{"✗ failed", "⏸ held by shop--a", "⊘ blocked", "0/3 stories done · last run: failed"} {
			if !strings.Contains(r.LensAfter, want) {
				t.Errorf("shop's lenses after the run %q lack %q", r.LensAfter, want)
			}
		}
	})

	t.Run("stop", func(t *testing.T) {
		partErr(t, "stop")
		r := res.Stop
		if !regexp.MustCompile(`^SAGA slow 0/1 ▶1$`).MatchString(r.StatuslineRunning) {
			t.Errorf("statusline while slow runs %q, want \"SAGA slow 0/1 ▶1\"", r.StatuslineRunning)
		}
		if r.State != "stopped" || !strings.HasPrefix(r.Message, "saga: stopped epic slow") || r.StatuslineAfter != "" {
			t.Errorf(":SagaStop slow: state %q, message %q, statusline after %q", r.State, r.Message, r.StatuslineAfter)
		}
	})
}
