package lsp

// The statuses a story shows while it runs: its worktree (or main) copy
// raised by the running worker's task list and events, and what lenses and
// commands read of a run.

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

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
// copy), raised by a running worker's task list and events.
func (l *live) computeView(st *liveStory) map[string]string {
	src := st.wt
	if src == nil {
		src = st.base
	}
	view := maps.Clone(src)
	if view == nil {
		view = map[string]string{}
	}
	if r := l.activeRun(st.id); r != nil {
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
func (l *live) restatus(st *liveStory, source string, ef *effects) {
	nv := l.computeView(st)
	old := st.view
	st.view = nv
	changed := false
	for _, t := range slices.Sorted(maps.Keys(nv)) {
		from, had := old[t]
		if !had || from == nv[t] {
			continue
		}
		changed = true
		p := &taskStatusParams{Story: st.id, Task: t, Subject: st.subject[t], From: from, To: nv[t], Source: source}
		ef.add(func() { l.notifySaga("saga/taskStatus", p) })
	}
	if changed {
		ef.refresh = true
	}
}

// activeRun is the story's newest run whose worker has not ended.
func (l *live) activeRun(story string) *liveRun {
	var best *liveRun
	for _, r := range l.runs {
		if r.Story == story && r.verified && !r.Ended && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

// lastRun is the story's newest run (ended or not).
func (l *live) lastRun(story string) *liveRun {
	var best *liveRun
	for _, r := range l.runs {
		if r.Story == story && r.verified && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

func (l *live) sortedRuns() []*liveRun {
	rs := slices.Collect(maps.Values(l.runs))
	slices.SortFunc(rs, func(a, b *liveRun) int { return cmp.Or(cmp.Compare(a.ms, b.ms), strings.Compare(a.Session, b.Session)) })
	return rs
}

// counts is done/total as the story's view has them (else as the worker
// last reported).
func (l *live) counts(r *liveRun) (done, total int) {
	if st := l.stories[r.Story]; st != nil && len(st.view) > 0 {
		for _, s := range st.view {
			if s == store.StatusCompleted {
				done++
			}
		}
		return done, len(st.view)
	}
	return max(r.Done, 0), max(r.Total, 0)
}

// liveRunInfo is a run as the lenses and commands see it.
type liveRunInfo struct {
	Session, State, Step, OutputFile, Message string
	Cycle, Done, Total                        int
	Running                                   bool
}

// liveStoryInfo is a story's live state for lenses.
type liveStoryInfo struct {
	Running bool
	Run     *liveRunInfo      // the running worker, else the last run seen (nil when none)
	View    map[string]string // task statuses of the live view; nil without one
	HasWT   bool              // a worktree copy exists
	// Checks is each task's last check result in that run.
	Checks map[string]runs.CheckResult
}

func (l *live) storyInfo(story string) liveStoryInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	var info liveStoryInfo
	if l.closed || !l.started {
		return info
	}
	r := l.activeRun(story)
	if r == nil {
		r = l.lastRun(story)
	}
	if r != nil {
		done, total := l.counts(r)
		info.Run = &liveRunInfo{Session: r.Session, State: r.State, Step: r.Step, OutputFile: r.OutputFile,
			Message: r.Message, Cycle: r.Cycle, Done: done, Total: total, Running: !r.Ended}
		info.Running = !r.Ended
		info.Checks = maps.Clone(r.Checks)
	}
	if !info.Running && l.lockAliveLocked(story) {
		info.Running = true
	}
	if st := l.stories[story]; st != nil {
		info.HasWT = st.wt != nil
		if info.Running || info.HasWT {
			info.View = maps.Clone(st.view)
		}
	}
	return info
}
