package dashboard_test

// Runs watched live in the browser: real workers in a private tmux server
// (the saga-lsp binary, its built-in simulated agent for --dry-run, the
// stand-in claude of testdata/standin/claude otherwise), started and
// stopped from the page.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	tbrowser "github.com/saga-ai/saga-lsp/internal/testkit/browser"
)

// liveRepo is a git repository with files, a session dir, a Claude config
// dir and a private tmux server, set in the environment the dashboard
// reads and, through tmux, the workers.
func liveRepo(t *testing.T, files map[string]string, script string, delayMS int) string {
	t.Helper()
	for _, tool := range []string{"tmux", "git"} {
		testkit.NeedsTool(t, tool, "")
	}
	tbrowser.Chromium(t)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tmp, "shop") // the repository's name in the pages
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	sessionDir, config := t.TempDir(), t.TempDir()
	for k, v := range map[string]string{
		"SAGA_SESSION_DIR":      sessionDir,
		"SAGA_TMUX_SOCKET":      testkit.TmuxServer(t),
		"SAGA_LSP_BIN":          testkit.Binary(t),
		"SAGA_CLAUDE":           testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_GH":               filepath.Join(config, "no-gh"),
		"CLAUDE_CONFIG_DIR":     config,
		"SAGA_STANDIN_SCRIPT":   script,
		"SAGA_STANDIN_DELAY_MS": strconv.Itoa(delayMS),
		"TMUX":                  "",
		"TMUX_PANE":             "",
	} {
		t.Setenv(k, v)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(sessionDir, "saga-*.log"))
		for _, p := range logs {
			data, _ := os.ReadFile(p)
			t.Logf("--- %s:\n%s", filepath.Base(p), data)
		}
	})
	return root
}

// chain is a story of n tasks, each blocked by the one before.
func chain(files map[string]string, story, title, description string, n int) {
	files[".saga/stories/"+story+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": %q, "description": %q}`+"\n", story, title, description)
	for i := 1; i <= n; i++ {
		var before []string
		if i > 1 {
			before = []string{fmt.Sprintf("t%d", i-1)}
		}
		files[fmt.Sprintf(".saga/stories/%s/t%d.json", story, i)] = task(fmt.Sprintf("t%d", i), "pending", before...)
	}
}

// recordProgress makes the page note the story's state and done count at
// each of its live updates.
func (b *browser) recordProgress() {
	b.T.Helper()
	b.Eval(`(() => {
		window.__seen = [];
		const rec = () => { const f = document.querySelector('#story-facts'); if (f) window.__seen.push([f.dataset.state, +f.dataset.done]); };
		rec();
		document.addEventListener('saga:refreshed', rec);
		return true;
	})()`, nil)
}

// progress is what recordProgress noted.
func (b *browser) progress() (states []string, done []int) {
	b.T.Helper()
	var seen [][2]any
	b.Eval(`window.__seen`, &seen)
	for _, s := range seen {
		states = append(states, s[0].(string))
		done = append(done, int(s[1].(float64)))
	}
	return states, done
}

// checkRising: the done counts never fall, start at 0 and end at total,
// and, when intermediate is set, show a count between.
func checkRising(t *testing.T, states []string, done []int, total int, intermediate bool) {
	t.Helper()
	if len(done) == 0 || done[0] != 0 || done[len(done)-1] != total {
		t.Errorf("progress %v, want 0 … %d", done, total)
	}
	for i := 1; i < len(done); i++ {
		if done[i] < done[i-1] {
			t.Errorf("progress fell: %v", done)
		}
	}
	if !slices.Contains(states, "running") {
		t.Errorf("never shown running: %v", states)
	}
	if intermediate && !slices.ContainsFunc(done, func(d int) bool { return d > 0 && d < total }) {
		t.Errorf("no progress between 0 and %d shown: %v", total, done)
	}
}

// TestLiveStoryRuns: a --dry-run run started from the page and watched
// to completion, its changes reviewed; then a run through the stand-in
// claude, stopped from the page, run again and watched to completion, its
// output (which holds markup) live and shown as text.
func TestLiveStoryRuns(t *testing.T) {
	files := map[string]string{}
	chain(files, "ship", "Ship it", "Ship everything.", 4)
	chain(files, "pack", "Pack it", "Pack things.\nSIMAGENT bash echo '<script>window.pwned=1</script><b>bold</b>'", 4)
	root := liveRepo(t, files, "slow", 250)
	s := serve(t, root)
	key := repoKeyOf(root)
	b := newBrowser(t)
	b.open(s.srv.URL())

	// --dry-run, from the page, watched to the end in its runs' row: a
	// dry run is never the story's (docs/worker.md#dry-runs), so the
	// story stays pending.
	b.open(s.base + "/r/" + key + "/story/ship")
	b.Do(click(`form.action input[name=dryRun]`))
	b.confirmAction("#run-story")
	b.WaitJS(`(document.querySelector('table[data-table=runs] tbody')||{textContent:''}).textContent.includes('exit 0')`, 120*time.Second)
	if runs := b.Text(`table[data-table=runs] tbody`); !contains(runs, "(dry run)", "completed", "exit 0") {
		t.Errorf("runs: %q", runs)
	}
	// Once its worker has let go of the story's lock (just after its
	// last event), the story is pending again, not completed.
	b.WaitJS(`document.querySelector('#story-facts').dataset.state !== 'running'`, 60*time.Second)
	var storyState string
	b.Eval(`document.querySelector('#story-facts').dataset.state`, &storyState)
	if storyState != "pending" {
		t.Errorf("after a dry run the story is %q, want pending: the dry run became the story's", storyState)
	}
	if run := b.Text("#run-story"); !strings.Contains(run, "Run again") {
		t.Errorf("after a run the button says %q", run)
	}
	// Review: the branch's changes, SAGA's own files flagged.
	b.NavigateBy(click("#review-story"))
	files2 := b.Text(`table[data-table=files]`)
	if !contains(files2, "saga-work/ship/t1.md", "added", ".saga/stories/ship/t1.json", "SAGA's files") {
		t.Errorf("review: %q", files2)
	}
	b.NavigateBy(click(`a[href$="file=saga-work%2Fship%2Ft1.md"]`))
	if diff := b.Text("pre.diff"); !contains(diff, "+++ b/saga-work/ship/t1.md", "+") {
		t.Errorf("diff: %q", diff)
	}
	// Reset from the page: the dry run's worktree, branch and runs go.
	b.open(s.base + "/r/" + key + "/story/ship")
	b.confirmAction("#reset-story")
	b.WaitJS(`!(document.querySelector('table[data-table=runs] tbody')||{textContent:''}).textContent.includes('dry run')`, 60*time.Second)
	if _, err := os.Stat(filepath.Join(root, ".saga", "worktrees", "ship.dry")); !os.IsNotExist(err) {
		t.Errorf("after Reset the dry run's worktree is still there (%v)", err)
	}

	// The stand-in claude, slow: Stop from the page while it runs.
	b.open(s.base + "/r/" + key + "/story/pack")
	b.recordProgress()
	b.confirmAction("#run-story")
	b.WaitJS(`document.querySelector('#story-facts').dataset.state === 'running' && +document.querySelector('#story-facts').dataset.done >= 1`, 120*time.Second)
	// Its output, live, markup as text.
	b.WaitJS(`(document.querySelector('#output pre')||{textContent:''}).textContent.includes('<script>window.pwned=1</script><b>bold</b>')`, 60*time.Second)
	var pwned bool
	b.Eval(`window.pwned === 1 || document.querySelectorAll('#output b, #output script').length > 0`, &pwned)
	if pwned {
		t.Errorf("the agent's output ran as markup")
	}
	b.confirmAction("#stop-story")
	b.WaitJS(`document.querySelector('#story-facts').dataset.state === 'stopped'`, 90*time.Second)
	if runs := b.Text(`table[data-table=runs] tbody`); !strings.Contains(runs, "stopped") {
		t.Errorf("runs after stop: %q", runs)
	}
	// Run again: to the end.
	b.confirmAction("#run-story")
	b.WaitJS(`document.querySelector('#story-facts').dataset.state === 'completed'`, 180*time.Second)
	states, done := b.progress()
	t.Logf("stand-in run: %v %v", states, done)
	checkRising(t, states, done, 4, true)
	var outputs int
	b.Eval(`window.sagaDashboard.outputs`, &outputs)
	if outputs == 0 {
		t.Errorf("the output never updated live")
	}
	if n := b.Count(`table[data-table=runs] tbody tr`); n != 2 {
		t.Errorf("%d runs listed, want 2", n)
	}
}
