package lsp

// An epic's state as the editor shows it: derived by control.EpicState —
// the one derivation `saga-lsp status <epic>` and the runner itself use —
// at most once every epicMinInterval per epic, and turned into
// saga/epicProgress, a cancellable work-done progress, code-lens refreshes
// and the story-held diagnostic.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// epicMinInterval paces deriving an epic's state and so saga/epicProgress:
// a busy run never sends more than a few per second.
const epicMinInterval = 250 * time.Millisecond

// epicProgressParams is the saga/epicProgress notification.
type epicProgressParams struct {
	Epic    string            `json:"epic"`
	Session string            `json:"session"`
	State   string            `json:"state"`
	Running []string          `json:"running"`
	Done    int               `json:"done"`
	Total   int               `json:"total"`
	Held    []string          `json:"held"`
	Failed  []string          `json:"failed"`
	Cost    float64           `json:"cost"`
	Stories []epicStoryParams `json:"stories"`
}

// epicStoryParams is one story of saga/epicProgress.
type epicStoryParams struct {
	ID     string   `json:"id"`
	State  string   `json:"state"`
	HeldBy []string `json:"heldBy"`
	Done   int      `json:"done"`
	Total  int      `json:"total"`
}

// epicInputs is what of the workspace an epic's state was derived from:
// the epic and its stories, immutable and shared between snapshots while
// untouched, so pointers tell whether they changed.
type epicInputs struct {
	epic    *store.Epic
	stories []*store.Story
}

func inputsOf(ws *store.Workspace, id string) epicInputs {
	in := epicInputs{epic: ws.Epic(id)}
	if in.epic != nil {
		for _, c := range in.epic.Children {
			in.stories = append(in.stories, ws.Story(c.ID))
		}
	}
	return in
}

func (a epicInputs) same(b epicInputs) bool {
	return a.epic == b.epic && slices.Equal(a.stories, b.stories)
}

// epicQueryLocked is what deriving the epic's state needs: judged from its
// run's start (and, by EpicState, with the conflicts its runner met), as the
// runner judges it.
func (l *live) epicQueryLocked(e *liveEpic) control.EpicQuery {
	q := control.EpicQuery{Root: l.root, Epic: e.id, SessionDir: l.sessionDir, Env: l.env, Parser: l.s.parser}
	if e.run != nil {
		q.Since = e.run.Started
	}
	return q
}

// epicStatus is the epic's state for lenses, diagnostics and showPlan: the
// stored one while nothing changed since it was derived, else derived now
// and stored (the progress loop then sends what changed). nil when the
// workspace has no such epic.
func (l *live) epicStatus(ctx context.Context, snap *Snapshot, id string) *control.EpicStatus {
	in := inputsOf(snap.WS, id)
	if in.epic == nil {
		return nil
	}
	l.mu.Lock()
	if !l.started || l.closed {
		l.mu.Unlock()
		st, err := control.EpicState(ctx, snap.WS, control.EpicQuery{Root: snap.Root, Epic: id, Env: l.env, Parser: l.s.parser})
		if err != nil {
			return nil
		}
		return st
	}
	e := l.ensureEpic(id)
	if e.status != nil && e.doneGen == e.gen && e.key.same(in) {
		st := e.status
		l.mu.Unlock()
		return st
	}
	q, gen := l.epicQueryLocked(e), e.gen
	l.mu.Unlock()
	st, err := control.EpicState(ctx, snap.WS, q)
	if err != nil {
		l.s.log.Debug("live: epic state", "epic", id, "err", err)
		return nil
	}
	l.step(func(_ *Snapshot, ef *effects) {
		if l.epicDerivedLocked(snap, e, st, in, gen, ef) {
			l.epicBell.ring()
		}
	})
	return st
}

// epicDerivedLocked stores a derived state unless a newer one is stored
// already; when it differs from the last, the lenses are refreshed and the
// epic's files republished (story-held). It reports whether it changed.
func (l *live) epicDerivedLocked(snap *Snapshot, e *liveEpic, st *control.EpicStatus, in epicInputs, gen uint64, ef *effects) bool {
	if gen < e.doneGen {
		return false
	}
	old := e.status
	e.status, e.key, e.doneGen = st, in, gen
	if old != nil && reflect.DeepEqual(old, st) {
		return false
	}
	ef.refresh = true
	for _, f := range snap.WS.EpicDefinitions(e.id) {
		ef.rels[f.Rel] = true
	}
	return true
}

// epicLoop derives epics' states when something moved, then waits
// epicMinInterval: changes in between are folded into the next pass.
func (l *live) epicLoop() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.epicBell:
		}
		l.guard("epics", l.refreshEpics)
		t := time.NewTimer(epicMinInterval)
		select {
		case <-l.done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refreshEpics derives the state of every epic something moved since (those
// with a run, and those the lenses showed), then sends each announced run's
// progress when it changed.
func (l *live) refreshEpics() {
	snap := l.s.current()
	type job struct {
		e   *liveEpic
		q   control.EpicQuery
		gen uint64
		in  epicInputs
	}
	var jobs []job
	l.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(l.epics)) {
		e := l.epics[id]
		in := inputsOf(snap.WS, id)
		if in.epic == nil || (e.run == nil && e.status == nil) {
			continue
		}
		if e.status == nil || e.doneGen != e.gen || !e.key.same(in) {
			jobs = append(jobs, job{e, l.epicQueryLocked(e), e.gen, in})
		}
	}
	l.mu.Unlock()
	for _, j := range jobs {
		st, err := control.EpicState(l.ctx, snap.WS, j.q)
		if err != nil {
			l.s.log.Debug("live: epic state", "epic", j.e.id, "err", err)
			continue
		}
		l.step(func(_ *Snapshot, ef *effects) { l.epicDerivedLocked(snap, j.e, st, j.in, j.gen, ef) })
	}
	l.step(func(_ *Snapshot, ef *effects) {
		for _, id := range slices.Sorted(maps.Keys(l.epics)) {
			l.epicProgressLocked(l.epics[id], ef)
		}
	})
}

// epicParamsLocked builds saga/epicProgress from the stored state, with the
// live task counts of the stories that run.
func (l *live) epicParamsLocked(e *liveEpic) *epicProgressParams {
	st := e.status
	p := &epicProgressParams{Epic: e.id, Session: st.Session, State: st.State, Running: nonNilStrings(slices.Clone(st.Running)),
		Done: st.Done, Total: st.Total, Held: []string{}, Failed: []string{}, Cost: st.Cost, Stories: []epicStoryParams{}}
	for _, s := range st.Stories {
		sp := epicStoryParams{ID: s.ID, State: s.State, HeldBy: nonNilStrings(slices.Clone(s.HeldBy)), Done: s.Done, Total: s.Total}
		if ls := l.stories[s.ID]; s.State == control.EpicRunning && ls != nil && len(ls.view) > 0 {
			sp.Done, sp.Total = viewCounts(ls.view)
		}
		p.Stories = append(p.Stories, sp)
		switch s.State {
		case control.EpicHeld:
			p.Held = append(p.Held, s.ID)
		case runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout:
			p.Failed = append(p.Failed, s.ID)
		}
	}
	return p
}

// epicProgressLocked sends saga/epicProgress and the work-done progress
// of an announced run when what they show changed; the end is sent once.
func (l *live) epicProgressLocked(e *liveEpic, ef *effects) {
	if !e.announce || e.status == nil || e.run == nil || e.status.Session != e.run.Session {
		return
	}
	p := l.epicParamsLocked(e)
	if e.sent != nil && reflect.DeepEqual(e.sent, p) {
		return
	}
	first := e.sent == nil
	e.sent = p
	ending := p.State != runs.StateRunning
	if ending {
		e.announce = false
	}
	ef.refresh = true
	ef.add(func() { l.notifySaga("saga/epicProgress", p) })
	l.progressStep(ef, e, first, ending, "SAGA epic "+e.id, epicProgressText(p), percent(p.Done, p.Total))
}

// epicProgressText is the work-done progress message: "3/8 stories · 2
// running" while the run lives, "failed · 5/8 stories · held: shop--d" at
// its end.
func epicProgressText(p *epicProgressParams) string {
	if p.State == runs.StateRunning {
		return fmt.Sprintf("%d/%d stories · %d running", p.Done, p.Total, len(p.Running))
	}
	s := fmt.Sprintf("%s · %d/%d stories", p.State, p.Done, p.Total)
	if len(p.Failed) > 0 {
		s += " · not completed: " + strings.Join(p.Failed, ", ")
	}
	if len(p.Held) > 0 {
		s += " · held: " + strings.Join(p.Held, ", ")
	}
	return s
}

// epicDiagnosticsLocked is story-held on the child entries of an epic file
// whose epic has a run: a held story, with what holds it.
func (l *live) epicDiagnosticsLocked(rel string, f *store.File) []store.Diagnostic {
	e := l.epics[f.Owner]
	if f.Epic == nil || e == nil || e.status == nil || e.status.Session == "" {
		return nil
	}
	by := make(map[string]control.EpicStory, len(e.status.Stories))
	for _, s := range e.status.Stories {
		by[s.ID] = s
	}
	var out []store.Diagnostic
	for _, c := range f.Epic.Children {
		s, ok := by[c.ID]
		if !ok || s.State != control.EpicHeld || c.Node == nil {
			continue
		}
		out = append(out, liveDiagnostic(rel, f, c.Node.Start, c.Node.End, store.CodeStoryHeld, heldMessage(e.id, s, by)))
	}
	return out
}

// heldMessage says what holds a story and what to do.
func heldMessage(epic string, s control.EpicStory, by map[string]control.EpicStory) string {
	if len(s.Conflicts) > 0 {
		return fmt.Sprintf("story %s is held: the branches of its blockers %s conflict in %s — merge them by hand, then run epic %s again",
			s.ID, strings.Join(s.HeldBy, ", "), strings.Join(s.Conflicts, ", "), epic)
	}
	what := func(b string) string {
		switch by[b].State {
		case runs.StatusFailed:
			return "failed"
		case runs.StatusBlocked:
			return "is blocked"
		case runs.StatusTimeout:
			return "timed out"
		case runs.StatusStopped:
			return "was stopped"
		case control.EpicHeld:
			return "is held"
		}
		return by[b].State
	}
	if len(s.HeldBy) == 1 {
		b := s.HeldBy[0]
		return fmt.Sprintf("story %s is held: its blocker %s %s — see why (`saga-lsp status %s`, its output), fix it, then run epic %s again",
			s.ID, b, what(b), b, epic)
	}
	parts := make([]string, len(s.HeldBy))
	for i, b := range s.HeldBy {
		parts[i] = fmt.Sprintf("%s (%s)", b, what(b))
	}
	return fmt.Sprintf("story %s is held: its blockers %s did not complete — see why (`saga-lsp status <story>`, their output), fix them, then run epic %s again",
		s.ID, strings.Join(parts, ", "), epic)
}

// epicFileDiagnosticsLocked is every epic file's story-held diagnostics.
func (l *live) epicFileDiagnosticsLocked(snap *Snapshot) []store.Diagnostic {
	var out []store.Diagnostic
	for _, id := range slices.Sorted(maps.Keys(l.epics)) {
		for _, f := range snap.WS.EpicDefinitions(id) {
			out = append(out, l.epicDiagnosticsLocked(f.Rel, f)...)
		}
	}
	return out
}
