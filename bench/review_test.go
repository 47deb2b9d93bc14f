package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// BenchmarkReviewRoundStart is issue 34's budget: from a review detected —
// a watcher's poll read a writer's new "changes requested" — to the story's
// worker started (`run --review` in tmux: control.StartStory returns once
// the worker took its lock and wrote its first events), ≤ 2 s. Each op is
// one poll of a completed story's PR (the gh stand-in) after a new review;
// the round it starts runs to its end untimed (the stand-in claude).
// Reported: detect→started (the start alone), and the whole poll.
func BenchmarkReviewRoundStart(b *testing.B) {
	bin := builtBinary(b)
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	testkit.WriteFiles(b, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "One small task."}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": []}` + "\n",
	})
	testkit.InitRepo(b, root)
	testkit.BareOrigin(b, root)
	state := filepath.Join(base, "gh.json")
	env := map[string]string{"SAGA_TMUX_SOCKET": testkit.TmuxServer(b), "SAGA_SESSION_DIR": filepath.Join(base, "sessions"), "SAGA_LSP_BIN": bin,
		"SAGA_CLAUDE": testkit.Build(b, "./testdata/standin/claude"), "SAGA_GH": testkit.Build(b, "./testdata/standin/gh"),
		"GH_STANDIN_STATE": state, "GH_STANDIN_REPO": "acme/s", "CLAUDE_CONFIG_DIR": filepath.Join(base, "claude"), "HOME": base}
	for k, v := range env {
		b.Setenv(k, v) // the stand-in gh asked from this process, and the worker's environment
	}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	if r := testkit.Run(b, root, append(testkit.CleanEnv(), envList...), "", bin, "worker", "s"); r.Code != 0 {
		b.Fatalf("first run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	p, err := store.NewParser()
	if err != nil {
		b.Fatal(err)
	}
	ws := workspace.Load(b, root)
	setup := control.Setup{Root: root, SessionDir: env["SAGA_SESSION_DIR"], Env: getenv}
	var startS, pollS []float64
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		seedChangesRequested(b, state, i)
		var started *readmodel.Started
		var took time.Duration
		start := func(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
			t0 := time.Now()
			st, err := control.StartStory(ctx, o)
			took, started = time.Since(t0), st
			return st, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		var poll control.WatchPoll
		b.StartTimer()
		t0 := time.Now()
		err := control.WatchReview(ctx, control.WatchOptions{Setup: setup, Stories: []string{"s"}, Workspace: ws, Parser: p,
			GH: env["SAGA_GH"], Tick: make(chan time.Time), Start: start, Polled: func(wp control.WatchPoll) { poll = wp; cancel() }})
		whole := time.Since(t0)
		b.StopTimer()
		if err != nil || len(poll.Started) != 1 || len(poll.Errs) > 0 || started == nil {
			b.Fatalf("poll %d: %v %+v", i, err, poll)
		}
		startS, pollS = append(startS, took.Seconds()), append(pollS, whole.Seconds())
		// The round runs to its end before the next review (untimed).
		if r := testkit.Run(b, root, append(testkit.CleanEnv(), envList...), "", bin, "follow", "s"); r.Code != 0 {
			b.Fatalf("round %d: exit %d\n%s%s", i, r.Code, r.Stdout, r.Stderr)
		}
		b.StartTimer()
	}
	b.ReportMetric(median(startS), "detect-to-started-s")
	b.ReportMetric(median(pollS), "poll-s")
}

// seedChangesRequested gives the stand-in's one PR a new writer's review
// in state "changes requested" (the i-th), with a thread asking for it.
func seedChangesRequested(b *testing.B, state string, i int) {
	b.Helper()
	var gh map[string]any
	if err := json.Unmarshal([]byte(testkit.ReadFile(b, state)), &gh); err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 0, i, 0, time.UTC).Format(time.RFC3339)
	pr := gh["prs"].([]any)[0].(map[string]any)
	threads, _ := pr["reviewThreads"].([]any)
	pr["reviewThreads"] = append(threads, map[string]any{"id": fmt.Sprintf("PRRT_%d", i), "path": "README.md", "line": 1, "comments": []any{
		map[string]any{"id": fmt.Sprintf("PRRC_%d", i), "author": "alice", "body": "Once more, please.", "updatedAt": at}}})
	reviews, _ := pr["reviews"].([]any)
	pr["reviews"] = append(reviews, map[string]any{"id": fmt.Sprintf("PRR_%d", i), "author": "alice", "state": "CHANGES_REQUESTED", "body": "", "updatedAt": at})
	gh["collaborators"] = map[string]string{"alice": "write"}
	data, _ := json.Marshal(gh)
	if err := os.WriteFile(state, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReviewRoundOverhead is what a review round costs beyond the
// agent's own work (issue 34's closing figure, beside StoryOverhead's for a
// plain run): `saga-lsp worker s --review` on a completed story whose PR
// got one new writer's thread — the review read (one query, the
// permissions), the task written and committed, the run with the stand-in
// claude, the gate, the push, the reply posted and the thread resolved —
// wall time minus the stand-in claude's own and the gh stand-in's (which
// stands for GitHub's answers: reported apart, with its calls).
func BenchmarkReviewRoundOverhead(b *testing.B) {
	bin := builtBinary(b)
	base := b.TempDir()
	root := filepath.Join(base, "repo")
	testkit.WriteFiles(b, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "One small task."}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": []}` + "\n",
	})
	testkit.InitRepo(b, root)
	testkit.BareOrigin(b, root)
	state, times, ghTimes := filepath.Join(base, "gh.json"), filepath.Join(base, "times"), filepath.Join(base, "gh-times")
	// Each wrapper notes when its program started and ended.
	wrap := func(name, prog, times string) string {
		w := filepath.Join(base, name)
		os.WriteFile(w, []byte(fmt.Sprintf("#!/bin/sh\ns=$(date +%%s%%N)\n%q \"$@\"\nrc=$?\necho \"$s $(date +%%s%%N)\" >> %q\nexit $rc\n", prog, times)), 0o755)
		return w
	}
	wrapper := wrap("claude", testkit.Build(b, "./testdata/standin/claude"), times)
	gh := wrap("gh", testkit.Build(b, "./testdata/standin/gh"), ghTimes)
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+wrapper, "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"), "SAGA_GH="+gh,
		"GH_STANDIN_STATE="+state, "GH_STANDIN_REPO=acme/s", "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude-config"))
	if r := testkit.Run(b, root, env, "", bin, "worker", "s"); r.Code != 0 {
		b.Fatalf("first run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var overS, ghS, ghCalls []float64
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		seedChangesRequested(b, state, i)
		os.Remove(times)
		os.Remove(ghTimes)
		b.StartTimer()
		t0 := time.Now()
		r := testkit.Run(b, root, env, "", bin, "worker", "s", "--review", "--max-review-rounds", "1000")
		wall := time.Since(t0)
		b.StopTimer()
		if r.Code != 0 || !strings.Contains(r.Stdout, "replied on") {
			b.Fatalf("round %d: exit %d\n%s%s", i, r.Code, r.Stdout, r.Stderr)
		}
		inClaude, _ := spent(b, times)
		inGH, calls := spent(b, ghTimes)
		overS, ghS, ghCalls = append(overS, (wall-inClaude-inGH).Seconds()), append(ghS, inGH.Seconds()), append(ghCalls, float64(calls))
		b.StartTimer()
	}
	b.ReportMetric(median(overS), "round-overhead-s")
	b.ReportMetric(median(ghS), "gh-s")
	b.ReportMetric(median(ghCalls), "gh-calls")
}

// spent sums the start–end lines a wrapper noted, and counts them.
func spent(b *testing.B, file string) (time.Duration, int) {
	b.Helper()
	var d time.Duration
	n := 0
	for line := range strings.Lines(testkit.ReadFile(b, file)) {
		f := strings.Fields(line)
		s, _ := strconv.ParseInt(f[0], 10, 64)
		e, _ := strconv.ParseInt(f[1], 10, 64)
		d += time.Duration(e - s)
		n++
	}
	return d, n
}
