package watch

// An epic's state: derived by readmodel.EpicState — the one derivation
// `saga-lsp status <epic>` and the runner itself use — at most once every
// epicMinInterval per epic, and reported as EpicProgress.

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// epicMinInterval paces deriving an epic's state and so EpicProgress: a
// busy run never reports more than a few per second.
const epicMinInterval = 250 * time.Millisecond

// epicRestFactor bounds the share of time the epic loop spends deriving:
// after a pass that took d it rests at least epicRestFactor·d. A pass
// slowed by a loaded machine (a 200-story epic's on two cores busy with
// eight agents: hundreds of ms) then takes at most a quarter of the
// loop's time instead of all of it, and leaves the face's own requests
// the CPU (docs/architecture.md#an-epic-of-200-stories).
const epicRestFactor = 3

// epicInputs is what of the workspace an epic's state was derived from:
// its children and their blockers, and the stories (immutable and shared
// between workspaces while untouched, so pointers tell whether they
// changed). The epic's other fields — its title, its description — move
// nothing: an edit of them (a keystroke in epic.json) keeps the state.
type epicInputs struct {
	found    bool
	children []store.Child
	stories  []*store.Story
}

func inputsOf(ws *store.Workspace, id string) epicInputs {
	e := ws.Epic(id)
	if e == nil {
		return epicInputs{}
	}
	in := epicInputs{found: true, children: e.Children}
	for _, c := range e.Children {
		in.stories = append(in.stories, ws.Story(c.ID))
	}
	return in
}

func (a epicInputs) same(b epicInputs) bool {
	return a.found == b.found && slices.Equal(a.stories, b.stories) &&
		slices.EqualFunc(a.children, b.children, func(x, y store.Child) bool {
			return x.ID == y.ID && slices.EqualFunc(x.BlockedBy, y.BlockedBy, func(r, q store.Ref) bool { return r.ID == q.ID })
		})
}

// epicQueryLocked is what deriving the epic's state needs: the query
// every face renders an epic with (readmodel.ViewQuery), so that the state
// the watcher publishes is the one `status` prints.
func (w *Watcher) epicQueryLocked(e *epic) readmodel.EpicQuery {
	q := readmodel.ViewQuery(w.root, e.id, w.env, w.parser)
	q.SessionDir, q.Runs, q.Branches = w.sessionDir, &w.folds, &w.branchFolders
	if w.scanned { // the locks were probed (replaced, never modified: shared)
		q.WorkerLocks = w.workerLocks
	}
	return q
}

// dryQueryLocked is a dry run's own query — the dry runner's schedule,
// from its start, its stories' dry attempts counting — for its progress
// only; nil for a real run.
func (w *Watcher) dryQueryLocked(e *epic) *readmodel.EpicQuery {
	if e.run == nil || !e.run.DryRun {
		return nil
	}
	q := w.epicQueryLocked(e)
	q.Since, q.DryRun = e.run.Started, true
	return &q
}

// EpicStatus is the epic's state for a face's views and commands: the
// last one derived, at once. A request never waits for a derivation
// (≈ 100 ms of CPU and a few git processes at 200 stories, seconds on a
// loaded machine: docs/architecture.md#an-epic-of-200-stories): when
// something moved since, the epic loop derives it again and the faces
// are refreshed (the language server's codeLens/refresh, the dashboard's
// change event). Only the first request for an epic derives it here, so
// it may run git. nil when ws has no such epic or the derivation failed.
func (w *Watcher) EpicStatus(ctx context.Context, ws *store.Workspace, id string) *readmodel.EpicStatus {
	in := inputsOf(ws, id)
	if !in.found {
		return nil
	}
	if !w.mu.TryLock() {
		// The loop holds the lock for a step (a batch of files read, on a
		// loaded machine for long): the state it last published is as
		// good, and the epic loop looks again at what moved.
		if e := w.State().Epic(id); e != nil && e.Status != nil {
			w.epicBell.ring()
			return e.Status
		}
		w.mu.Lock()
	}
	if w.closed {
		w.mu.Unlock()
		st, err := readmodel.EpicState(ctx, ws, readmodel.ViewQuery(w.root, id, w.env, w.parser))
		if err != nil {
			return nil
		}
		return st
	}
	e := w.ensureEpic(id)
	if e.status != nil {
		st := e.status
		if e.doneGen != e.gen || !e.key.same(in) {
			w.epicBell.ring()
		}
		w.mu.Unlock()
		return st
	}
	q, dq, gen := w.epicQueryLocked(e), w.dryQueryLocked(e), e.gen
	w.mu.Unlock()
	st, err := readmodel.EpicState(ctx, ws, q)
	if err != nil {
		w.log.Debug("live: epic state", "epic", id, "err", err)
		return nil
	}
	// A dry run's own progress moves with it: derived here too, or the
	// epic loop, finding the state fresh, would never report its end.
	var dry *readmodel.EpicStatus
	if dq != nil {
		dry, _ = readmodel.EpicState(ctx, ws, *dq)
	}
	w.stepOn(ws, func(ef *effects) {
		changed := w.epicDerivedLocked(ws, e, st, in, gen, ef)
		if dry != nil && !reflect.DeepEqual(dry, e.dry) {
			e.dry, changed = dry, true
		}
		if changed {
			w.epicBell.ring()
		}
	})
	return st
}

// epicDerivedLocked stores a derived state unless a newer one is stored
// already; when it differs from the last, the views are refreshed and the
// epic's files named (story-held). It reports whether it changed.
func (w *Watcher) epicDerivedLocked(ws *store.Workspace, e *epic, st *readmodel.EpicStatus, in epicInputs, gen uint64, ef *effects) bool {
	if gen < e.doneGen {
		return false
	}
	old := e.status
	e.status, e.key, e.doneGen = st, in, gen
	if old != nil && reflect.DeepEqual(old, st) {
		return false
	}
	ef.refresh = true
	for _, f := range ws.EpicDefinitions(e.id) {
		ef.rels[f.Rel] = true
	}
	return true
}

// epicLoop derives epics' states when something moved, then rests
// (epicMinInterval, epicRestFactor): changes in between are folded into
// the next pass.
func (w *Watcher) epicLoop() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-w.epicBell:
		}
		began := time.Now()
		w.guard("epics", w.refreshEpics)
		t := time.NewTimer(max(epicMinInterval, epicRestFactor*time.Since(began)))
		select {
		case <-w.done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refreshEpics derives the state of every epic something moved since (those
// with a run, and those a face asked for), then reports each announced
// run's progress when it changed.
func (w *Watcher) refreshEpics() {
	ws := w.workspace()
	type job struct {
		e   *epic
		q   readmodel.EpicQuery
		dry *readmodel.EpicQuery // a dry run's own schedule, for its progress
		gen uint64
		in  epicInputs
	}
	var jobs []job
	w.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(w.epics)) {
		e := w.epics[id]
		in := inputsOf(ws, id)
		if !in.found || (e.run == nil && e.status == nil) {
			continue
		}
		if e.status == nil || e.doneGen != e.gen || !e.key.same(in) {
			jobs = append(jobs, job{e, w.epicQueryLocked(e), w.dryQueryLocked(e), e.gen, in})
		}
	}
	w.mu.Unlock()
	for _, j := range jobs {
		st, err := readmodel.EpicState(w.ctx, ws, j.q)
		if err != nil {
			w.log.Debug("live: epic state", "epic", j.e.id, "err", err)
			continue
		}
		var dry *readmodel.EpicStatus
		if j.dry != nil {
			dry, _ = readmodel.EpicState(w.ctx, ws, *j.dry)
		}
		w.stepOn(ws, func(ef *effects) {
			if w.epicDerivedLocked(ws, j.e, st, j.in, j.gen, ef) || (dry != nil && !reflect.DeepEqual(dry, j.e.dry)) {
				ef.refresh = true
			}
			if dry != nil || j.dry == nil {
				j.e.dry = dry
			}
		})
	}
	w.stepOn(ws, func(ef *effects) {
		for _, id := range slices.Sorted(maps.Keys(w.epics)) {
			w.epicProgressLocked(w.epics[id], ef)
		}
	})
}

// epicProgressOf builds EpicProgress from the stored state, with the live
// task counts of the stories that run.
func (w *Watcher) epicProgressOf(e *epic) EpicProgress {
	st := e.status
	if e.dry != nil {
		st = e.dry
	}
	p := EpicProgress{DryRun: e.dry != nil, Epic: e.id, Session: st.Session, State: st.State, Running: nonNil(slices.Clone(st.Running)),
		Done: st.Done, Total: st.Total, Held: []string{}, Failed: []string{}, Cost: st.Cost, Stories: []EpicStoryProgress{}}
	for _, s := range st.Stories {
		sp := EpicStoryProgress{ID: s.ID, State: s.State, HeldBy: nonNil(slices.Clone(s.HeldBy)), Done: s.Done, Total: s.Total, Actions: s.Actions}
		if ls := w.stories[s.ID]; s.State == readmodel.EpicRunning && ls != nil && len(ls.view) > 0 {
			sp.Done, sp.Total = viewCounts(ls.view)
		}
		p.Stories = append(p.Stories, sp)
		switch s.State {
		case readmodel.EpicHeld:
			p.Held = append(p.Held, s.ID)
		case runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout:
			p.Failed = append(p.Failed, s.ID)
		}
	}
	return p
}

// epicProgressLocked reports an announced run's progress when what it
// shows changed; the end is reported once.
func (w *Watcher) epicProgressLocked(e *epic, ef *effects) {
	if !e.announce || e.status == nil || e.run == nil || e.status.Session != e.run.Session {
		return
	}
	p := w.epicProgressOf(e)
	if e.sent != nil && reflect.DeepEqual(*e.sent, p) {
		return
	}
	first := e.sent == nil
	e.sent = &p
	ending := p.State != runs.StateRunning
	if ending {
		e.announce = false
	}
	ef.refresh = true
	sent := p
	sent.First, sent.Ended = first, ending
	ef.add(func(s Sink) { s.EpicProgress(sent) })
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
