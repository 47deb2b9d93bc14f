package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/plan"
	"go.lsp.dev/protocol"
)

// codeLens answers textDocument/codeLens:
//
//   - story.json, on the id line: "▶ Run story" (saga.runStory), "Address
//     review (n)" (saga.addressReview) with "Review story" when its next
//     step is address-review, or while
//     the story's worker lives "■ Stop" (saga.stopStory) and "Show output"
//     (saga.showOutput), then an informational lens: "3/7 tasks done ·
//     status: in_progress" (the story's effective status, as its tasks show
//     it), or while a worker runs "● running · 3/7 tasks done · cycle 2"
//     from the live view (the worktree copy and the hydrated task list);
//     after a run the last run's result is appended (and "Show output"
//     stays), and " · worktree: 7/7" when the worktree copy's count differs;
//   - a task file, on the id line: "status: pending · wave 2/4" (the wave
//     from the story's plan), "status: completed", or "… · blocked (cycle)"
//     for a task on a dependency cycle and "… · blocked (behind a cycle)"
//     for one waiting on a cycle; " · worktree: in_progress" when the live
//     view says otherwise; " · ✓ checks" or " · ✗ check failed" after the
//     last run's result of the task's checks;
//   - a story with a PR not landed: "⇣ Land" (saga.land), its land state
//     in the title; "Resolve conflict" (saga.resolveConflict) while its
//     conflict task is open (docs/landing.md);
//   - an epic, on its id: "▶ Run epic" (saga.runEpic), or while its runner
//     lives "■ Stop epic" (saga.stopEpic), "⇣ Land epic" (saga.land) when a
//     story's PR is not landed, then "3/8 stories done"; on each
//     children[] entry the story's run state in the epic ("✓ completed",
//     "● running 3/5", "⏸ held by shop--a", …) from the epic's state
//     (runs/watch), or "no such story", and "▶ Run" / "■ Stop".
//
// Informational lenses carry a Command with an empty command id: VS Code
// renders such a lens as plain, unclickable text (and never tries to run
// it), and other clients show the title too. Action lenses name commands of
// executeCommandProvider, under the client's prefix, with arguments
// [{"story": "<name>"}] ([{"epic": "<id>"}] for the epic's). The live state
// is the run watcher's State (runs/watch, live.go); an epic's state is
// derived once per change and kept (readmodel.EpicState asks git which story
// branches exist), so only an epic's lenses may wait for it.
func codeLens(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.CodeLensParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	lenses := []protocol.CodeLens{}
	f := snap.FileAt(p.TextDocument.URI)
	root := f.Root()
	if root == nil {
		return lenses, nil
	}
	prefix := s.clientInfo().commandPrefix
	switch {
	case f.Kind == store.KindStory && f.Story != nil:
		lenses = append(lenses, lensStory(ctx, s, snap, f, root, prefix)...)
	case f.Kind == store.KindTask && f.Task != nil:
		lenses = append(lenses, lensTask(s, snap, f, root))
	case f.Kind == store.KindEpic && f.Epic != nil:
		lenses = append(lenses, lensEpic(ctx, s, snap, f, root, prefix)...)
	}
	return lenses, nil
}

// lensStory: run or stop (and show output), then done/total tasks and the
// effective status.
func lensStory(ctx context.Context, s *Server, snap *Snapshot, f *store.File, root *jsonc.Node, prefix string) []protocol.CodeLens {
	st := snap.WS.StoryOf(f)
	if st == nil { // a story.json outside the workspace: its own fields, no tasks
		st = f.Story
	}
	r := lensIDRange(f, root)
	title := fmt.Sprintf("%d/%d tasks done · status: %s", st.Done(), len(st.Tasks), st.EffectiveStatus())
	if !store.ValidCanonical(f.Owner) {
		return []protocol.CodeLens{lensInfo(r, title)}
	}
	info := s.live.storyInfo(f.Owner)
	// The story's state is the read model's (readmodel.Evidence: what plan,
	// status and the dashboard say): its counts where its statuses are
	// read, and completed also when they are no longer in the workspace —
	// its worktree cleaned away, its work on its branch.
	es, known := s.live.epicStory(ctx, snap, st.EpicID(), f.Owner)
	shownDone, shownTotal := st.Done(), len(st.Tasks)
	// (An epic's story's counts are the epic's as last derived, which may
	// lag the snapshot: its own files' are shown.)
	if known && st.EpicID() == "" && !info.Running && (es.Done != shownDone || es.Total != shownTotal) && es.State != runs.StatusCompleted {
		shownDone, shownTotal = es.Done, es.Total
		title = fmt.Sprintf("%d/%d tasks done · status: %s", es.Done, es.Total, st.EffectiveStatus())
	}
	if known && es.State == runs.StatusCompleted && st.EffectiveStatus() != store.StatusCompleted && !info.Running {
		title = fmt.Sprintf("%d/%d tasks done · status: completed (on %s)", es.Done, es.Total, cmp.Or(es.Branch, "its branch"))
	}
	// Its next step is the read model's (what status and the dashboard
	// offer); before an epic's state is derived, its own files say.
	next := readmodel.EpicStory{ID: f.Owner, State: readmodel.StoryPending}
	if known {
		next = es
	} else if st.EffectiveStatus() == store.StatusCompleted {
		next.State = runs.StatusCompleted
	}
	step := next.Next()
	args := []any{map[string]string{"story": f.Owner}}
	var out []protocol.CodeLens
	if r := next.Review; r != nil && !info.Running {
		// The review loop as recorded (docs/review.md#in-every-face).
		title += " · review: " + r.Text()
	}
	switch {
	case step.Action == readmodel.NextAddressReview && !info.Running:
		// A review round on its branch and PR (`run <s> --review`), and
		// the diff view.
		out = append(out, lensCommand(r, next.Review.AddressTitle(), prefix+"addressReview", args),
			lensCommand(r, "Review story", prefix+"reviewStory", args))
		title += " · next: " + step.Text
	case step.Action == readmodel.NextReview && !info.Running:
		// Nothing to run: its next step is the review of its work (then
		// its PR), or `run --again` from a terminal (docs/features.md#code-lens).
		out = append(out, lensCommand(r, "Review story", prefix+"reviewStory", args))
		title += " · next: " + step.Text
	case step.Action == readmodel.NextOpenPR && !info.Running:
		// `run` of a completed story without its PR opens it, without its agent.
		out = append(out, lensCommand(r, "▶ Open PR", prefix+"runStory", args))
		title += " · next: " + step.Text
	case info.Running:
		out = append(out, lensCommand(r, "■ Stop", prefix+"stopStory", args))
		if info.Run != nil && info.Run.OutputFile != "" {
			out = append(out, lensCommand(r, "Show output", prefix+"showOutput", args))
		}
		done, total := st.Done(), len(st.Tasks)
		if len(info.View) > 0 {
			done, total = viewCounts(info.View)
		}
		title = fmt.Sprintf("● running · %d/%d tasks done", done, total)
		if info.Run != nil && info.Run.DryRun {
			title = "● dry run"
		}
		if info.Run != nil && info.Run.Actions != nil {
			title = "● " + info.Run.Actions.Text()
		}
		if info.Run != nil && info.Run.Running && info.Run.Cycle > 0 {
			title += fmt.Sprintf(" · cycle %d", info.Run.Cycle)
		}
	default:
		out = append(out, lensCommand(r, "▶ Run story", prefix+"runStory", args))
		if info.Run != nil && info.Run.OutputFile != "" {
			out = append(out, lensCommand(r, "Show output", prefix+"showOutput", args))
		}
		if info.HasWT && len(info.View) > 0 {
			if d, t := viewCounts(info.View); d != shownDone || t != shownTotal {
				title += fmt.Sprintf(" · worktree: %d/%d", d, t)
			}
		}
		switch {
		case es.Actions != nil: // GitHub's state, as last recorded
			title += " · " + es.Actions.Text()
		case info.Run != nil && info.Run.Actions != nil:
			title += " · " + info.Run.Actions.Text()
		case known && lensOutcome(es.State):
			title += " · last run: " + es.State
		case info.Run != nil && info.Run.DryRun:
			title += " · last dry run: " + info.Run.State
		case info.Run != nil && !known: // an epic's story before its epic's state is derived
			title += " · last run: " + info.Run.State
		}
	}
	if !info.Running && known {
		out, title = lensLand(r, prefix, next, out, title)
	}
	return append(out, lensInfo(r, title))
}

// lensLand adds the story's landing (docs/landing.md#in-the-dashboard-and-the-editors):
// "Resolve conflict" while its conflict task is open, "⇣ Land" while its
// PR is not landed, and its land state in the title.
func lensLand(r protocol.Range, prefix string, es readmodel.EpicStory, out []protocol.CodeLens, title string) ([]protocol.CodeLens, string) {
	args := []any{map[string]string{"story": es.ID}}
	if es.Conflict != nil {
		out = append(out, lensCommand(r, "Resolve conflict", prefix+"resolveConflict", args))
	}
	switch {
	case es.PRState == runs.PRMerged:
		title += " · landed"
	case es.PR != "":
		out = append(out, lensCommand(r, "⇣ Land", prefix+"land", args))
		if es.Land != nil {
			title += " · land: " + es.Land.State
		}
	}
	return out, title
}

// lensOutcome tells the end states a story's lens names as its last run's.
func lensOutcome(state string) bool {
	switch state {
	case runs.StatusFailed, runs.StatusTimeout, runs.StatusBlocked, runs.StatusStopped:
		return true
	}
	return false
}

// viewCounts is done/total of a live view.
func viewCounts(view map[string]string) (done, total int) {
	for _, s := range view {
		if s == store.StatusCompleted {
			done++
		}
	}
	return done, len(view)
}

// lensTask: the task's status and its wave in the story's plan.
func lensTask(s *Server, snap *Snapshot, f *store.File, root *jsonc.Node) protocol.CodeLens {
	t := f.Task
	status := symbolStatus(t.Status)
	title := "status: " + status
	if st := snap.WS.StoryOf(f); st != nil && t.Status != store.StatusCompleted {
		title += lensWaveText(plan.Compute(store.TaskPlanItems(st), 0), t.ID)
	}
	if store.ValidCanonical(f.Owner) {
		info := s.live.storyInfo(f.Owner)
		if v, ok := info.View[f.Name]; ok && v != status {
			title += " · worktree: " + v
		}
		if c, ok := info.Checks[f.Name]; ok && c.Passed {
			title += " · ✓ checks"
		} else if ok {
			title += " · ✗ check failed"
		}
		if len(info.Protected) > 0 {
			title += " · ✗ protected files changed"
		}
	}
	return lensInfo(lensIDRange(f, root), title)
}

// lensWaveText says where a task sits in a plan: " · wave n/m", " ·
// blocked (cycle)", " · blocked (behind a cycle)", " · not planned (broken
// file)" or " · blocked (behind a broken task)"; "" when it is not planned
// (completed).
func lensWaveText(p plan.Plan, id string) string {
	if w := p.WaveOf[id]; w > 0 {
		return fmt.Sprintf(" · wave %d/%d", w, p.WaveCount)
	}
	by := make(map[string][]string, len(p.Blocked)+len(p.Broken))
	for _, b := range p.Blocked {
		by[b.ID] = b.By
	}
	broken := map[string]bool{}
	for _, b := range p.Broken {
		broken[b.ID] = true
	}
	_, stuck := by[id]
	switch {
	case broken[id]:
		return " · not planned (broken file)"
	case !stuck:
		return ""
	case lensOnCycle(by, id):
		return " · blocked (cycle)"
	case lensReaches(by, id, broken):
		return " · blocked (behind a broken task)"
	}
	return " · blocked (behind a cycle)"
}

// lensReaches reports whether one of targets is among id's transitive
// stuck blockers.
func lensReaches(by map[string][]string, id string, targets map[string]bool) bool {
	seen := map[string]bool{}
	stack := append([]string(nil), by[id]...)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if targets[v] {
			return true
		}
		if !seen[v] {
			seen[v] = true
			stack = append(stack, by[v]...)
		}
	}
	return false
}

// lensOnCycle reports whether id can reach itself through the stuck
// blockers of the plan: it is on a cycle, not merely behind one. (Plan
// reports one cycle path per strongly connected component; a task can be on
// another cycle of the same component.)
func lensOnCycle(by map[string][]string, id string) bool {
	return lensReaches(by, id, map[string]bool{id: true})
}

// lensEpic: on the epic's id, ▶ Run epic (■ Stop epic while its runner
// lives) and how many stories are done; on each children[] entry, the
// story's run state in the epic (epicStoryTitle) and ▶ Run / ■ Stop for
// the story alone, or "no such story".
func lensEpic(ctx context.Context, s *Server, snap *Snapshot, f *store.File, root *jsonc.Node, prefix string) []protocol.CodeLens {
	var out []protocol.CodeLens
	var st *readmodel.EpicStatus
	if store.ValidID(f.Owner) {
		st = s.live.epicStatus(ctx, snap, f.Owner)
		r := lensIDRange(f, root)
		args := []any{map[string]string{"epic": f.Owner}}
		running := s.live.epicRunning(f.Owner)
		if running {
			out = append(out, lensCommand(r, "■ Stop epic", prefix+"stopEpic", args))
		} else {
			out = append(out, lensCommand(r, "▶ Run epic", prefix+"runEpic", args))
		}
		if st != nil && !running && slices.ContainsFunc(st.Stories, func(es readmodel.EpicStory) bool { return es.PR != "" && es.PRState != runs.PRMerged }) {
			out = append(out, lensCommand(r, "⇣ Land epic", prefix+"land", args))
		}
		if st != nil {
			title := fmt.Sprintf("%d/%d stories done", st.Done, st.Total)
			switch {
			case running:
				title = fmt.Sprintf("● %s · %d running", title, len(st.Running))
			case st.Session != "" && st.DryRun:
				title += " · last run: a dry run, " + st.State + " (simulated)"
			case st.Session != "":
				title += " · last run: " + st.State
			}
			out = append(out, lensInfo(r, title))
		}
	}
	states := map[string]readmodel.EpicStory{}
	if st != nil {
		for _, es := range st.Stories {
			states[es.ID] = es
		}
	}
	for _, c := range f.Epic.Children {
		if c.Node == nil {
			continue
		}
		r := lensSingleLine(nodeRange(f, c.Node))
		story := snap.WS.Story(c.ID)
		if story == nil || !store.ValidCanonical(c.ID) {
			if snap.Loaded {
				out = append(out, lensInfo(r, "no such story"))
			} else {
				out = append(out, lensInfo(r, "loading…")) // refreshed once loaded
			}
			continue
		}
		info := s.live.storyInfo(c.ID)
		args := []any{map[string]string{"story": c.ID}}
		es, ok := states[c.ID]
		if !ok { // the epic's state could not be derived: the story's own
			es = readmodel.EpicStory{ID: c.ID, State: story.EffectiveStatus(), Done: story.Done(), Total: len(story.Tasks)}
		}
		out = append(out, lensInfo(r, epicStoryTitle(es, info)))
		if info.Running {
			out = append(out, lensCommand(r, "■ Stop", prefix+"stopStory", args))
		} else {
			out = append(out, lensCommand(r, "▶ Run", prefix+"runStory", args))
		}
	}
	return out
}

// epicStoryTitle is a child story's run state in its epic: "○ waiting",
// "○ ready", "● running 3/5" (its tasks, live), "✓ completed", "✗ failed",
// "✗ timeout", "⊘ blocked", "■ stopped", "⏸ held by shop--a"; a state
// other than running and completed gets " · 1/5 tasks" when some but not
// all tasks are done.
func epicStoryTitle(es readmodel.EpicStory, info liveStoryInfo) string {
	done, total := es.Done, es.Total
	if info.Running && len(info.View) > 0 {
		done, total = viewCounts(info.View)
	}
	if info.Running || es.State == readmodel.EpicRunning {
		return fmt.Sprintf("● running %d/%d", done, total)
	}
	var title string
	switch es.State {
	case runs.StatusCompleted:
		return "✓ completed"
	case readmodel.EpicHeld:
		title = "⏸ held by " + strings.Join(es.HeldBy, ", ")
		if len(es.Conflicts) > 0 {
			title += " · conflicts: " + strings.Join(es.Conflicts, ", ")
		}
	case runs.StatusFailed, runs.StatusTimeout:
		title = "✗ " + es.State
	case runs.StatusBlocked:
		title = "⊘ blocked"
	case runs.StatusStopped:
		title = "■ stopped"
	default: // waiting, ready; a story's own status when the epic's state is unknown
		title = "○ " + es.State
	}
	if done > 0 && done < total {
		title += fmt.Sprintf(" · %d/%d tasks", done, total)
	}
	return title
}

// lensIDRange is where a file's lens goes: the id value, else the opening
// brace of the top-level object.
func lensIDRange(f *store.File, root *jsonc.Node) protocol.Range {
	if id := root.Get("id"); id != nil {
		return lensSingleLine(nodeRange(f, id))
	}
	return spanRange(f, root.Start(), root.Start()+1)
}

// lensSingleLine trims a range to its first line: a lens should span one line
// (an unterminated string can run on).
func lensSingleLine(r protocol.Range) protocol.Range {
	if r.End.Line != r.Start.Line {
		r.End = r.Start
	}
	return r
}

// lensInfo is a lens that only shows text (see codeLens).
func lensInfo(r protocol.Range, title string) protocol.CodeLens {
	return protocol.CodeLens{Range: r, Command: protocol.Command{Title: title, Command: ""}}
}

// lensCommand is a clickable lens running one of our commands.
func lensCommand(r protocol.Range, title, command string, args []any) protocol.CodeLens {
	raw := make([]protocol.LSPAny, 0, len(args))
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			continue
		}
		raw = append(raw, protocol.LSPAny(b))
	}
	return protocol.CodeLens{Range: r, Command: protocol.Command{Title: title, Command: command, Arguments: raw}}
}
