package watch

// The statuses a story shows while it runs: its worktree (or main) copy
// raised by the running worker's task list and events.

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// statusOf is a task's status as shown: pending when unset.
func statusOf(status string) string {
	if status == "" {
		return store.StatusPending
	}
	return status
}

// statusRank orders statuses so that sources disagreeing during a run
// show the most advanced one until they agree (the worktree copy lags the
// task list by a hook's run).
func statusRank(s string) int {
	switch s {
	case store.StatusCompleted:
		return 2
	case store.StatusInProgress:
		return 1
	}
	return 0
}

// computeView merges a story's sources: the worktree copy (else the main
// copy), raised by a running worker's task list and events. The result is
// a new map: a published State may hold the old one.
func (w *Watcher) computeView(st *story) map[string]string {
	src := st.wt
	if src == nil {
		src = st.base
	}
	view := maps.Clone(src)
	if view == nil {
		view = map[string]string{}
	}
	// A dry run's statuses are the simulated agent's, in its own worktree:
	// never the story's (docs/worker.md#dry-runs).
	if r := w.activeRun(st.id); r != nil && !r.DryRun {
		for t, v := range view {
			for _, s := range []string{r.Tasks[t], r.list[t]} {
				if statusRank(s) > statusRank(v) {
					v = s
				}
			}
			view[t] = v
		}
	}
	return view
}

// restatus recomputes the story's view and announces each task whose status
// moved, as coming from source.
func (w *Watcher) restatus(st *story, source string, ef *effects) {
	nv := w.computeView(st)
	old := st.view
	st.view = nv
	changed := false
	for _, t := range slices.Sorted(maps.Keys(nv)) {
		from, had := old[t]
		if !had || from == nv[t] {
			continue
		}
		changed = true
		c := TaskStatus{Story: st.id, Task: t, Subject: st.subject[t], From: from, To: nv[t], Source: source}
		ef.add(func(s Sink) { s.TaskStatus(c) })
	}
	if changed {
		ef.refresh = true
	}
}

// activeRun is the story's newest run whose worker has not ended.
func (w *Watcher) activeRun(story string) *run {
	var best *run
	for _, r := range w.runs {
		if r.Story == story && r.verified && !r.Ended && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

// lastRun is the story's newest run (ended or not).
func (w *Watcher) lastRun(story string) *run {
	var best *run
	for _, r := range w.runs {
		if r.Story == story && r.verified && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

func (w *Watcher) sortedRuns() []*run {
	rs := slices.Collect(maps.Values(w.runs))
	slices.SortFunc(rs, func(a, b *run) int { return cmp.Or(cmp.Compare(a.ms, b.ms), strings.Compare(a.Session, b.Session)) })
	return rs
}

// counts is done/total as the story's view has them (else as the worker
// last reported).
func (w *Watcher) counts(r *run) (done, total int) {
	if st := w.stories[r.Story]; st != nil && len(st.view) > 0 {
		return viewCounts(st.view)
	}
	return max(r.Done, 0), max(r.Total, 0)
}

// viewCounts is done/total of a view.
func viewCounts(view map[string]string) (done, total int) {
	for _, s := range view {
		if s == store.StatusCompleted {
			done++
		}
	}
	return done, len(view)
}
