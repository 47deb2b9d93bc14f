package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// BenchmarkEpicDerive200 is a long-lived reader's derivation of a
// 200-story epic whose first 100 stories have a branch of their own (its
// tasks completed there): what the epic runner does at every step and each
// face's live watcher after a run's change (readmodel.EpicState through a
// kept runs.RunCache). Side by side in one run: with no story folders
// kept between derivations (each reads every branch's folder from git),
// with them kept and no tip moved (most of a run's changes: events,
// statuses in a worktree), and with them kept and one branch's tip moved
// before each derivation (a story's commit).
func BenchmarkEpicDerive200(b *testing.B) {
	var children [][2]any
	for i := range 200 {
		children = append(children, [2]any{fmt.Sprintf("big--s%03d", i), []string{}})
	}
	root := epicRepo(b, "big", children, 3)
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("big--s%03d", i)
	}
	refFile, tips := storyBranches(b, root, ids, store.StatusInProgress)

	p, err := store.NewParser()
	must(b, err)
	ws, err := p.Load(root)
	must(b, err)
	sessionDir := b.TempDir()
	env := func(k string) string { return map[string]string{runs.EnvSessionDir: sessionDir}[k] }
	var folds runs.RunCache
	ctx := context.Background()
	derive := func(kept *readmodel.BranchFolders) {
		q := readmodel.ViewQuery(root, "big", env, p)
		q.Runs, q.Branches = &folds, kept
		st, err := readmodel.EpicState(ctx, ws, q)
		if err != nil {
			b.Fatal(err)
		}
		if st.Total != 200 || st.Stories[0].Total != 3 {
			b.Fatalf("derived %d stories, the first %+v", st.Total, st.Stories[0])
		}
	}
	kept := &readmodel.BranchFolders{}
	derive(kept)
	var fresh, still, move []float64
	i := 0
	for b.Loop() {
		start := time.Now()
		derive(nil)
		fresh = append(fresh, time.Since(start).Seconds())

		start = time.Now()
		derive(kept)
		still = append(still, time.Since(start).Seconds())

		i++
		must(b, os.WriteFile(refFile, []byte(tips[i%2]+"\n"), 0o644))
		start = time.Now()
		derive(kept)
		move = append(move, time.Since(start).Seconds())
	}
	b.ReportMetric(median(fresh)*1e3, "fresh-ms")
	b.ReportMetric(median(still)*1e3, "kept-ms")
	b.ReportMetric(median(move)*1e3, "kept-moved-ms")
	b.ReportMetric(median(move)/median(fresh), "kept-moved/fresh")
}

// storyBranches gives each story of ids a branch of its own in root, its
// tasks (3, as epicRepo wrote them) completed there, in one git process;
// the first story's tip can be moved between the two tips given (the
// second with its tasks' status movedStatus), by writing one of them to
// refFile: a story's commit during a run.
func storyBranches(b *testing.B, root string, ids []string, movedStatus string) (refFile string, tips [2]string) {
	b.Helper()
	main := testkit.Git(b, root, "rev-parse", "HEAD")
	var stream strings.Builder
	commit := func(sid, status, from string) {
		short := sid[strings.LastIndex(sid, "-")+1:]
		fmt.Fprintf(&stream, "commit refs/heads/%s\ncommitter B <b@example.invalid> 0 +0000\ndata 0\n", runs.StoryBranch(sid))
		if from != "" {
			fmt.Fprintf(&stream, "from %s\n", from)
		}
		for t := 1; t <= 3; t++ {
			blocked := "[]"
			if t > 1 {
				blocked = fmt.Sprintf(`["%s-t%d"]`, short, t-1)
			}
			data := fmt.Sprintf(`{"id": "%s-t%d", "subject": "Do t%d", "description": "", "status": %q, "blockedBy": %s}`+"\n", short, t, t, status, blocked)
			fmt.Fprintf(&stream, "M 100644 inline .saga/stories/%s/%s-t%d.json\ndata %d\n%s\n", sid, short, t, len(data), data)
		}
	}
	for _, id := range ids {
		commit(id, store.StatusCompleted, main)
	}
	moved := ids[0]
	commit(moved, movedStatus, "") // on top of its first
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = root, strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	tips = [2]string{testkit.Git(b, root, "rev-parse", runs.StoryBranch(moved)+"^"), testkit.Git(b, root, "rev-parse", runs.StoryBranch(moved))}
	return filepath.Join(root, ".git", "refs", "heads", filepath.FromSlash(runs.StoryBranch(moved))), tips
}
