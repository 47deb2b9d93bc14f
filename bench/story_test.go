package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// BenchmarkStoryOverhead is issue 24's budget for what a story run costs
// outside Claude (today ≈ 0.4 s, kept ≤ 0.5 s): `saga-lsp worker` on a
// story of one task, with the stand-in claude (testdata/standin/claude)
// doing it, wall time minus the stand-in's own (a wrapper records when it
// started and ended). What is left is the worker's: lock, worktree, build
// caches (the warm ones found, npm's seeded), hydration, hooks' starts
// inside the run are the stand-in's, the commit and the end.
func BenchmarkStoryOverhead(b *testing.B) {
	bin := builtBinary(b)
	standin := testkit.Build(b, "./testdata/standin/claude")
	var overS, wallS []float64
	for b.Loop() {
		b.StopTimer()
		base := b.TempDir()
		root := filepath.Join(base, "repo")
		testkit.WriteFiles(b, root, map[string]string{
			".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "One small task."}` + "\n",
			".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": []}` + "\n",
		})
		testkit.InitRepo(b, root)
		times := filepath.Join(base, "times")
		wrapper := filepath.Join(base, "claude")
		os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\ns=$(date +%%s%%N)\n%q \"$@\"\nrc=$?\necho \"$s $(date +%%s%%N)\" >> %q\nexit $rc\n", standin, times)), 0o755)
		env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+wrapper, "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
			"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude-config"), "SAGA_GH="+filepath.Join(base, "no-gh"))
		b.StartTimer()
		start := time.Now()
		r := testkit.Run(b, root, env, "", bin, "worker", "s")
		wall := time.Since(start)
		b.StopTimer()
		if r.Code != 0 {
			b.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		var inClaude time.Duration
		for line := range strings.Lines(testkit.ReadFile(b, times)) {
			f := strings.Fields(line)
			s, _ := strconv.ParseInt(f[0], 10, 64)
			e, _ := strconv.ParseInt(f[1], 10, 64)
			inClaude += time.Duration(e - s)
		}
		overS, wallS = append(overS, (wall-inClaude).Seconds()), append(wallS, wall.Seconds())
		b.StartTimer()
	}
	b.ReportMetric(median(wallS), "wall-s")
	b.ReportMetric(median(overS), "overhead-s")
}
