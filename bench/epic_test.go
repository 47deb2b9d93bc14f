package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// The epic runner's budgets (docs/architecture.md#budgets, issue "Epic runs"): a story's
// end → its ready dependents' workers started ≤ 1 s; the runner's RSS ≤ 30
// MB; `status <epic>` on a 200-story epic ≤ 100 ms.

// epicRepo writes a git repository holding epic id whose children are
// given as id → blockers, each story with tasks tasks, and commits it.
func epicRepo(b *testing.B, id string, children [][2]any, tasks int) string {
	b.Helper()
	root := b.TempDir()
	var entries []string
	for _, c := range children {
		sid, blockers := c[0].(string), c[1].([]string)
		bb, _ := json.Marshal(append([]string{}, blockers...))
		entries = append(entries, fmt.Sprintf(`{"id": %q, "blockedBy": %s}`, sid, bb))
		dir := filepath.Join(root, ".saga", "stories", sid)
		must(b, os.MkdirAll(dir, 0o755))
		must(b, os.WriteFile(filepath.Join(dir, "story.json"), fmt.Appendf(nil, `{"id": %q, "title": "Story %s", "description": "Part of %s."}`+"\n", sid, sid, id), 0o644))
		// Task ids differ between stories: the simulated agent writes a
		// file per task id, and the same file on two branches conflicts.
		short := sid[strings.LastIndex(sid, "-")+1:]
		for t := 1; t <= tasks; t++ {
			blocked := "[]"
			if t > 1 {
				blocked = fmt.Sprintf(`["%s-t%d"]`, short, t-1)
			}
			must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-t%d.json", short, t)),
				fmt.Appendf(nil, `{"id": "%s-t%d", "subject": "Do t%d", "description": "", "status": "pending", "blockedBy": %s}`+"\n", short, t, t, blocked), 0o644))
		}
	}
	epicDir := filepath.Join(root, ".saga", "epics", id)
	must(b, os.MkdirAll(epicDir, 0o755))
	must(b, os.WriteFile(filepath.Join(epicDir, "epic.json"),
		fmt.Appendf(nil, `{"id": %q, "title": "Epic %s", "description": "", "children": [%s]}`+"\n", id, id, strings.Join(entries, ",\n  ")), 0o644))
	testkit.InitRepo(b, root)
	return root
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEpicRun runs a fan-out epic (a, then b, c, d on a's branch; then
// e after all three) with K = 3 as a dry run: the runner as a process with
// its workers in a private tmux server. Reports, from the runner's events,
// the time from a story's end to each dependent's start (max and median
// over the op's four hand-offs), and the runner's peak RSS.
func BenchmarkEpicRun(b *testing.B) {
	bin := builtBinary(b)
	children := [][2]any{
		{"fan--a", []string{}},
		{"fan--b", []string{"fan--a"}}, {"fan--c", []string{"fan--a"}}, {"fan--d", []string{"fan--a"}},
		{"fan--e", []string{"fan--b", "fan--c", "fan--d"}},
	}
	tmux := testkit.TmuxServer(b)
	var handoffs, rss []float64
	for b.Loop() {
		b.StopTimer()
		root := epicRepo(b, "fan", children, 2)
		sessionDir := b.TempDir()
		session := runs.KindSessionName(runs.KindEpic, "fan", time.Now())
		out := runs.OutputFile(sessionDir, session)
		cmd := exec.Command(bin, "epic-runner", "fan", "--max-parallel", "3", "--dry-run", "--output-file", out, "--session", session)
		cmd.Dir = root
		cmd.Env = append(testkit.CleanEnv(), "SAGA_TMUX_SOCKET="+tmux, "SAGA_SESSION_DIR="+sessionDir, "SAGA_LSP_BIN="+bin,
			"CLAUDE_CONFIG_DIR="+filepath.Join(b.TempDir(), "claude"))
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stdout
		b.StartTimer()
		peak, err := runPeakRSS(cmd)
		b.StopTimer()
		if err != nil {
			b.Fatalf("epic-runner: %v\n%s", err, stdout.Bytes())
		}
		rss = append(rss, float64(peak.KB)/1024)
		handoffs = append(handoffs, handoffLatencies(b, runs.EventsFile(out), children)...)
		b.StartTimer()
	}
	b.ReportMetric(slices.Max(handoffs), "handoff-max-ms")
	b.ReportMetric(median(handoffs), "handoff-p50-ms")
	b.ReportMetric(slices.Max(rss), "runner-peak-RSS-MB")
}

// handoffLatencies reads an epic run's events: for each story with
// blockers, its story.start's time minus its last blocker's story.end's,
// in ms. Every story must have completed.
func handoffLatencies(b *testing.B, events string, children [][2]any) []float64 {
	b.Helper()
	ended, started := map[string]time.Time{}, map[string]time.Time{}
	tl := runs.Tail{Path: events}
	tl.Read(func(e runs.Event) {
		switch e.Event {
		case runs.KindStoryStart:
			started[e.Story] = e.Time
		case runs.KindStoryEnd:
			if e.Status != runs.StatusCompleted {
				b.Fatalf("%s ended %s", e.Story, e.Status)
			}
			ended[e.Story] = e.Time
		}
	})
	var out []float64
	for _, c := range children {
		sid, blockers := c[0].(string), c[1].([]string)
		if len(blockers) == 0 {
			continue
		}
		var last time.Time
		for _, bl := range blockers {
			if ended[bl].After(last) {
				last = ended[bl]
			}
		}
		if started[sid].IsZero() || last.IsZero() {
			b.Fatalf("%s: start %v, blockers' end %v (events %s)", sid, started[sid], last, events)
		}
		out = append(out, float64(started[sid].Sub(last).Microseconds())/1e3)
	}
	return out
}

// BenchmarkEpicStatus200 times `saga-lsp status <epic> --format json` on a
// 200-story epic half way through a run: 100 stories completed (their run
// records and their branches, each its own commit, exist; their workers'
// events files in the session dir, as a worker writes them), the runner's
// events file there too, no runner alive. Two figures side by side:
// status-ms while the run goes on (what the last status kept — the
// branches' folders, the ended runs' folds — kept, one story's tip moved
// since) and cold-ms (nothing kept: every branch read from git and every
// events file folded, as the first status after a clone).
func BenchmarkEpicStatus200(b *testing.B) {
	bin := builtBinary(b)
	var children [][2]any
	for i := range 200 {
		var blockers []string
		if i >= 10 {
			blockers = []string{fmt.Sprintf("big--s%03d", i-10)}
			if i%3 == 0 {
				blockers = append(blockers, fmt.Sprintf("big--s%03d", i-7))
			}
		}
		children = append(children, [2]any{fmt.Sprintf("big--s%03d", i), blockers})
	}
	root := epicRepo(b, "big", children, 3)
	sessionDir := b.TempDir()
	session := runs.KindSessionName(runs.KindEpic, "big", time.Now().Add(-time.Hour))
	events := runs.EventsFile(runs.OutputFile(sessionDir, session))
	w, err := runs.OpenWriter(events, "", "big", session, time.Now)
	must(b, err)
	w.Emit(runs.Event{Event: runs.KindEpicStart})
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("big--s%03d", i)
	}
	refFile, tips := storyBranches(b, root, ids, store.StatusCompleted)
	for _, sid := range ids {
		w.Emit(runs.Event{Event: runs.KindStoryStart, Story: sid, Base: "main"})
		workerEvents(b, root, sessionDir, sid)
		w.Emit(runs.Event{Event: runs.KindStoryEnd, Story: sid, Status: runs.StatusCompleted})
		must(b, runs.WriteRecord(root, runs.Record{Story: sid, Session: runs.KindSessionName(runs.KindStory, sid, time.Now()), Status: runs.StatusCompleted,
			Ended: time.Now(), Branch: "story/" + sid, Base: "main", Cost: 0.5}))
	}
	must(b, w.Close())
	env := append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+sessionDir, "SAGA_TMUX_SOCKET="+filepath.Join(b.TempDir(), "no-tmux"))
	cacheDir, err := runs.ReadCacheDir(root)
	must(b, err)
	status := func() float64 {
		cmd := exec.Command(bin, "status", "big", "--format", "json")
		cmd.Dir, cmd.Env = root, env
		start := time.Now()
		out, err := cmd.Output()
		secs := time.Since(start).Seconds()
		if err != nil {
			b.Fatalf("status: %v\n%s", err, out)
		}
		var st struct{ Epic struct{ Done, Total int } }
		if json.Unmarshal(out, &st) != nil || st.Epic.Done != 100 || st.Epic.Total != 200 {
			b.Fatalf("status: %s", out)
		}
		return secs
	}
	var cold, warm []float64
	i := 0
	for b.Loop() {
		// Nothing kept from an earlier status: every branch read from git.
		must(b, os.RemoveAll(cacheDir))
		cold = append(cold, status())
		// While the run goes on: the branches' folders kept by the last
		// status, one story's tip moved since.
		i++
		must(b, os.WriteFile(refFile, []byte(tips[i%2]+"\n"), 0o644))
		warm = append(warm, status())
	}
	b.ReportMetric(median(warm)*1e3, "status-ms")
	b.ReportMetric(median(cold)*1e3, "cold-ms")
}

// workerEvents writes the events file of a completed one-task run of
// story, the events a worker writes (≈ 25 lines, as BenchmarkEpic200's).
func workerEvents(b *testing.B, root, sessionDir, story string) {
	b.Helper()
	session := runs.KindSessionName(runs.KindStory, story, time.Now())
	w, err := runs.OpenWriter(runs.EventsFile(runs.OutputFile(sessionDir, session)), story, "", session, time.Now)
	must(b, err)
	wt := store.WorktreeDir(root, story)
	w.Emit(runs.Event{Event: runs.KindWorkerStart, PID: 1 << 30, Worktree: wt})
	for _, step := range []string{runs.StepStart, runs.StepLock, runs.StepContext} {
		w.Emit(runs.Event{Event: runs.KindStep, Step: step, Message: "step " + step + " of " + story})
	}
	w.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepWorktree, Branch: "story/" + story, Base: "main", Worktree: wt})
	w.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepHydrate, TaskList: "saga__" + story, TaskListDir: "/tmp/tasks/saga__" + story, Done: runs.Int(0), Total: runs.Int(1)})
	w.Emit(runs.Event{Event: runs.KindRunStart, Cycle: 1, PID: 1<<30 + 1})
	for i := range 8 {
		w.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepLoop, Message: fmt.Sprintf("tool call %d: Bash go test ./...", i)})
	}
	w.Emit(runs.Event{Event: runs.KindTaskStatus, Task: "t1", From: "pending", To: "in_progress", Source: runs.SourceClaude})
	w.Emit(runs.Event{Event: runs.KindCheckEnd, Task: "t1", Command: "true", ExitCode: runs.Int(0), Passed: runs.Bool(true), DurationMs: runs.Int64(12)})
	w.Emit(runs.Event{Event: runs.KindTaskStatus, Task: "t1", From: "in_progress", To: "completed", Source: runs.SourceClaude})
	w.Emit(runs.Event{Event: runs.KindRunEnd, Cycle: 1, ExitCode: runs.Int(0), Cost: runs.Float(0.5), Done: runs.Int(1), Total: runs.Int(1)})
	for _, step := range []string{runs.StepCommit, runs.StepLoop, runs.StepPR} {
		w.Emit(runs.Event{Event: runs.KindStep, Step: step, Message: "step " + step + " of " + story})
	}
	w.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted, ExitCode: runs.Int(0), Done: runs.Int(1), Total: runs.Int(1)})
	must(b, w.Close())
}
