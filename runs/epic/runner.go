// Package epic runs an epic (docs/commands.md#epic-runs-run--follow--status--stop-epic): a deterministic
// scheduler, no model involved, that starts the epic's stories in
// dependency order — at most K at once, a slot refilled as soon as a story
// ends — each as an ordinary story worker started by the run's backend: in
// its own tmux session (control.StartStory, so a dependent story starts on
// its blockers' branches exactly as `saga-lsp run <story>` would, from the
// workspace the runner's step already loaded: one parse per step), or as
// a GitHub Actions job (runs/github, chosen by the CLI: Options.Backend),
// whose state then comes from GitHub (Options.Actions). A story that ends
// failed, blocked, timed out or stopped holds its dependents; the run ends
// when nothing runs and nothing can start.
//
// The runner's state is re-derived from disk, git, worker locks and events
// files (readmodel.EpicState) at every step, never kept only in its memory:
// `run <epic>` again after a crash, a reboot or a stop resumes — live
// workers are followed, finished stories are not run again, the rest is
// scheduled. While it runs it answers `status <epic>` with the faces' view
// derived from what its steps keep (serve.go).
package epic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// stepEpic labels the runner's own steps in its log.
const stepEpic = "epic"

// waitingOverlap is what the runner remembers of a story waiting for
// another whose paths overlap (report).
const waitingOverlap = "waiting (paths overlap)"

// retryPause is how long a story whose start found its service
// unreachable waits before the next try.
const retryPause = 5 * time.Second

// Options configure a runner.
type Options struct {
	Epic string
	Dir  string // where the runner was started; the workspace root is found from it
	runs.EpicFlags
	Worker runs.WorkerFlags // handed to every story's worker; validated once, where the process took them (the CLI)
	runs.Process
	Self string // the saga-lsp binary the workers run

	// Tick is the least wait between steps that no event woke: it bounds
	// how long a change goes unseen when file events are missed or not
	// watched (default 250 ms; the wait grows with a step's cost:
	// restAfter).
	Tick time.Duration

	// Backend starts the stories (default control.TmuxBackend).
	Backend control.Backend
	// Setup is the root's, resolved once by the caller
	// (runs/github.NewSetup); unset, its root is found from Dir. Its
	// Actions is asked about stories dispatched to GitHub Actions — about
	// every story when Backend is GitHub's (readmodel.Evidence.Discover) —
	// and cancels their runs on a stop.
	Setup control.Setup

	// stepped, when set, is called in the loop after each step: the
	// tests' sight of the loop (export_test.go).
	stepped func()
}

// runner is one runner's state: what it cannot derive from disk (which
// stories it has seen running, so each end is reported once; conflicts
// and refusals it met starting a story).
type runner struct {
	o         Options
	root      string
	parser    *store.Parser
	ws        *store.Workspace // as the last step loaded it: the one parse of a step
	setup     control.Setup    // Options.Setup with its root, environment and session dir
	tmux      *control.Tmux    // found once
	log       *runs.Log
	since     time.Time
	seen      map[string]string // story → last state reported
	conflicts map[string][]string
	refused   map[string]string
	retry     map[string]time.Time // stories whose start found its service unreachable: not before then
	capped    bool
	starting  map[string]bool         // stories whose start is under way: each holds a slot
	starts    chan start              // their outcomes, for the loop
	cut       []string                // stories whose start the stop cut short: stopped too
	graphs    *prGraphs               // rewrites the graph in the stories' PRs
	folds     runs.RunCache           // the stories' events files, folded again only when changed
	branches  readmodel.BranchFolders // story folders on branches, read again only where a tip moved
	kept      store.Kept              // the workspace's files, read again only when changed
}

// Run runs the epic to its end and returns the exit code. Cancelling ctx
// (SIGINT, SIGTERM, `saga-lsp stop <epic>`) stops every running story of
// the epic, then the runner ends with epic.end stopped.
func Run(ctx context.Context, o Options) int {
	o.defaults()
	l, err := o.OpenLog("", o.Epic)
	if err != nil {
		fmt.Fprintf(o.Stdout, "saga-lsp epic-runner: error: %v\n", err)
		return runs.ExitFailed
	}
	defer l.Close()
	r := &runner{o: o, log: l, since: o.Now(), seen: map[string]string{}, conflicts: map[string][]string{}, refused: map[string]string{}, retry: map[string]time.Time{},
		starting: map[string]bool{}, starts: make(chan start, max(o.MaxParallel, 1))}
	backend, where := "", ""
	if o.Backend.Name() != readmodel.BackendTmux {
		backend, where = o.Backend.Name(), " on "+o.Backend.Name()
	}
	root := o.Setup.Root // its repository (runs.Run.In)
	if root == "" {
		root, _ = store.FindRoot(cmp.Or(o.Dir, "."))
	}
	l.Emit(runs.Event{Event: runs.KindEpicStart, PID: os.Getpid(), ProcStart: supervise.SelfStart(), OutputFile: o.OutputFile, MaxParallel: o.MaxParallel, After: o.After, DryRun: o.Worker.DryRun, Backend: backend, Root: root},
		fmt.Sprintf("epic runner for %s (session %s, pid %d): at most %d stories at once%s, dependents start once a story is %s", o.Epic, o.Session, os.Getpid(), o.MaxParallel, where, o.After))
	status, code, st := r.execute(ctx)
	done, total, cost := 0, 0, 0.0
	if st != nil {
		done, total, cost = st.Done, st.Total, st.Cost
	}
	msg := fmt.Sprintf("epic %s %s: %d/%d stories, $%.2f, exit %d", o.Epic, status, done, total, cost, code)
	if o.Worker.DryRun {
		// The simulated agent's work, never the stories' (docs/worker.md#dry-runs).
		msg = fmt.Sprintf("epic %s dry run %s: %d/%d stories simulated (not the stories' progress), exit %d", o.Epic, status, done, total, code)
	}
	if st != nil && done < total {
		var left []string
		for _, s := range st.Stories {
			if s.State != runs.StatusCompleted {
				left = append(left, s.ID+" ("+s.State+")")
			}
		}
		msg += "; left: " + strings.Join(left, ", ") + fmt.Sprintf(" — `saga-lsp status %s` says why and what to do", o.Epic)
	}
	l.Emit(runs.Event{Event: runs.KindEpicEnd, Status: status, ExitCode: runs.Int(code), Done: runs.Int(done), Total: runs.Int(total), Cost: runs.Float(cost), Message: msg}, msg)
	return code
}

func (o *Options) defaults() {
	o.EpicFlags = o.EpicFlags.WithDefaults()
	if o.Env == nil {
		o.Env = o.Setup.Env
	}
	if o.SessionDir == "" {
		o.SessionDir = o.Setup.SessionDir
	}
	o.Process.Fill(runs.KindEpic, o.Epic)
	if o.Backend == nil {
		o.Backend = control.TmuxBackend{}
	}
	if o.Tick <= 0 {
		o.Tick = 250 * time.Millisecond
		if o.After == runs.AfterMerged {
			o.Tick = o.EpicFlags.PollInterval()
		}
	}
}

// execute holds the runner's lock and schedules until the end.
func (r *runner) execute(ctx context.Context) (status string, code int, st *readmodel.EpicStatus) {
	var err error
	if r.root = r.o.Setup.Root; r.root == "" {
		if r.root, err = store.FindRoot(cmp.Or(r.o.Dir, ".")); err != nil {
			r.log.Error(stepEpic, "%v", err)
			return runs.StatusFailed, runs.ExitFailed, nil
		}
	}
	r.setup = r.o.Setup
	r.setup.Root, r.setup.Env, r.setup.SessionDir = r.root, r.o.Env, r.o.SessionDir
	if r.parser, err = store.NewParser(); err != nil {
		r.log.Error(stepEpic, "%v", err)
		return runs.StatusFailed, runs.ExitFailed, nil
	}
	lock, ok, err := filesafe.TryLock(r.root, runs.EpicLockName(r.o.Epic))
	switch {
	case err != nil:
		r.log.Error(stepEpic, "%v", err)
		return runs.StatusFailed, runs.ExitFailed, nil
	case !ok:
		pid, _ := filesafe.LockHolder(r.root, runs.EpicLockName(r.o.Epic))
		r.log.Error(stepEpic, "another runner (pid %d) is running epic %s: follow it with `saga-lsp follow %s`", pid, r.o.Epic, r.o.Epic)
		return runs.StatusFailed, runs.ExitFailed, nil
	}
	defer lock.Unlock()
	r.tmux, _ = r.setup.FindTmux(ctx) // missing: each start says so

	wake, stopWatch := r.watch()
	defer stopWatch()
	served := r.serve()
	defer served.Close()
	r.graphs = r.startPRGraphs()
	defer r.graphs.close(2 * time.Minute)
	for {
		began := time.Now()
		st, err = r.state(ctx, served)
		took := time.Since(began)
		if r.o.stepped != nil {
			r.o.stepped()
		}
		if err != nil {
			r.settleAll(ctx)
			r.log.Error(stepEpic, "%v", err)
			return runs.StatusFailed, runs.ExitFailed, st
		}
		r.report(st)
		if ctx.Err() != nil {
			served.Close() // callers derive the state themselves meanwhile
			// A start under way may yet start its worker: stopped too.
			if r.settleAll(ctx) > 0 {
				if now, err := r.state(context.Background(), nil); err == nil {
					st = now
				}
			}
			return r.stop(st)
		}
		r.schedule(ctx, st)
		if len(r.starting) == 0 && len(st.Running) == 0 && r.nothingCanStart(st) {
			status, code = r.outcome(st)
			return status, code, st
		}
		rest := time.NewTimer(r.restAfter(took))
	wait:
		for {
			select {
			case <-ctx.Done():
			case <-wake:
			case x := <-r.starts:
				// A story that started holds the slot it held starting:
				// only a start that failed frees one.
				if r.settle(ctx, x) {
					continue wait
				}
			case c := <-served.Requests():
				r.answer(ctx, served, c)
				continue wait
			case <-rest.C:
			}
			break
		}
		rest.Stop()
	}
}

// state derives every story's state now and, while callers follow the
// run (served.Wanted), the faces' view from the same reads, which served
// answers them from until the next step.
func (r *runner) state(ctx context.Context, served *readmodel.EpicServer) (*readmodel.EpicStatus, error) {
	var view *readmodel.EpicQuery
	if served.Wanted() {
		v := r.viewQuery()
		view = &v
	}
	ws, st, vst, err := readmodel.LoadEpicStates(ctx, readmodel.EpicQuery{Root: r.root, Epic: r.o.Epic, SessionDir: r.o.SessionDir,
		After: r.o.After, Since: r.since, Conflicts: r.conflicts, Env: r.o.Env, Parser: r.parser, DryRun: r.o.Worker.DryRun,
		Actions: r.setup.Actions, Discover: r.o.Backend.Name() == readmodel.BackendGitHub, Runs: &r.folds, Branches: &r.branches, Kept: &r.kept},
		view)
	if ws != nil {
		r.ws = ws
	}
	served.Publish(titleOf(ws, r.o.Epic), vst) // none derived: withdrawn
	if err != nil {
		return nil, err
	}
	for i := range st.Stories {
		s := &st.Stories[i]
		if _, ok := r.refused[s.ID]; ok && s.State != readmodel.EpicRunning && s.State != runs.StatusCompleted {
			s.State = runs.StatusFailed // it could not start (reported then)
		}
	}
	return st, nil
}

// report announces every story whose state moved since the last step: a
// start, an end, a hold.
func (r *runner) report(st *readmodel.EpicStatus) {
	moved := false
	defer func() {
		if moved {
			r.graphs.update(st)
		}
	}()
	for _, s := range st.Stories {
		was, state := r.seen[s.ID], s.State
		if len(s.WaitsFor) > 0 {
			state = waitingOverlap // told once, apart from waiting for blockers
		}
		if was == state || r.starting[s.ID] {
			continue // a story being started is told once its start is (settle)
		}
		// Copies: a workspace's strings point into its load's chunks
		// (store.Load), and this map outlives the step — holding them
		// kept a chunk of every step that moved a story (the runner's
		// RSS grew with the run).
		r.seen[strings.Clone(s.ID)], moved = strings.Clone(state), true
		switch state {
		case waitingOverlap:
			r.log.Step(stepEpic, "%s: %s — their paths overlap, so they never run at once", s.ID, readmodel.WaitsText(s))
		case readmodel.EpicRunning:
			if was == "" {
				r.log.Emit(runs.Event{Event: runs.KindStoryStart, Story: s.ID, Session: s.Session, Base: s.Base, Adopted: true},
					fmt.Sprintf("%s: running (session %s) — followed from an earlier run", s.ID, s.Session))
			}
		case runs.StatusCompleted, runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout, runs.StatusStopped:
			if was == readmodel.EpicRunning || was == readmodel.EpicReady {
				why := ""
				if s.State != runs.StatusCompleted {
					why = s.Why
				}
				line := fmt.Sprintf("%s: %s (%d/%d tasks)", s.ID, s.State, s.Done, s.Total)
				if why != "" {
					line += " — " + why
				}
				r.log.Emit(runs.Event{Event: runs.KindStoryEnd, Story: s.ID, Status: s.State, PR: s.PR, Cost: runs.Float(s.Cost), Message: why}, line)
			}
		case readmodel.EpicHeld:
			r.log.Emit(runs.Event{Event: runs.KindStoryHeld, Story: s.ID, By: s.HeldBy, Files: s.Conflicts, Message: readmodel.HeldNext(r.o.Epic, s)},
				fmt.Sprintf("%s: %s", s.ID, readmodel.HeldText(r.o.Epic, s)))
		}
	}
	if !r.capped && r.o.MaxCost > 0 && st.Cost >= r.o.MaxCost {
		r.capped = true
		var left []string
		for _, s := range st.Stories {
			if s.State != runs.StatusCompleted && s.State != readmodel.EpicRunning {
				left = append(left, s.ID)
			}
		}
		r.log.Emit(runs.Event{Event: runs.KindEpicCap, Cost: runs.Float(st.Cost), By: left},
			fmt.Sprintf("the epic's runs cost $%.2f, reaching --max-cost $%.2f: no story and no run starts any more; left: %s",
				st.Cost, r.o.MaxCost, strings.Join(left, ", ")))
	}
}

// schedule starts ready stories, in plan's order, while slots are free,
// and returns without waiting for them: a start waits until its worker
// holds its lock (seconds on a loaded machine), and a loop that waited
// for the starts saw no story end meanwhile — its dependents waited too
// (docs/architecture.md#an-epic-of-200-stories). A story being started
// holds its slot until its outcome reaches the loop (settle).
func (r *runner) schedule(ctx context.Context, st *readmodel.EpicStatus) {
	if r.capped || ctx.Err() != nil {
		return
	}
	busy := len(st.Running)
	for id := range r.starting {
		if !slices.Contains(st.Running, id) {
			busy++
		}
	}
	ws := r.ws // the step's: the loop loads the next meanwhile
	for _, s := range st.Stories {
		if busy >= r.o.MaxParallel {
			break
		}
		if s.State != readmodel.EpicReady || r.starting[s.ID] || r.o.Now().Before(r.retry[s.ID]) {
			continue
		}
		id := strings.Clone(s.ID)
		branched := s.Branch != ""
		r.starting[id] = true
		busy++
		go func() {
			// Its branch against its siblings': a conflict is told, not
			// refused — landing resolves it (docs/landing.md#conflicts-foreseen).
			// A story the step saw without a branch (a first run: its
			// worker makes it) has nothing to foresee.
			var foreseen []runs.Foreseen
			if branched {
				foreseen = control.ForeseeConflicts(ctx, r.root, ws, id, nil)
			}
			env := []string{runs.EnvEpicEvents + "=" + runs.EventsFile(r.o.OutputFile)}
			res, err := r.o.Backend.StartStory(ctx, control.RunOptions{Setup: r.setup, Story: id, Worker: r.o.Worker,
				Workspace: ws, Parser: r.parser, Preflighted: true, FlagsValidated: true, Ready: true, Tmux: r.tmux,
				Self: r.o.Self, WorkerEnv: env, Now: r.o.Now})
			if err == nil {
				r.announce(id, res, foreseen)
			}
			r.starts <- start{id, err}
		}()
	}
}

// announce tells a story's start as it completes, from the start's own
// goroutine: the moment its worker holds its lock, not when the loop next
// takes the outcome in, a step's derivation later on loaded cores
// (docs/architecture.md#an-epic-of-200-stories). The log is safe to share.
func (r *runner) announce(id string, res *readmodel.Started, foreseen []runs.Foreseen) {
	backend := res.Backend
	if backend == readmodel.BackendTmux {
		backend = ""
	}
	line := fmt.Sprintf("%s: started on %s (session %s, pid %d)", id, res.Base, res.Session, res.PID)
	if res.URL != "" {
		line = fmt.Sprintf("%s: dispatched to GitHub Actions on %s: %s", id, res.Base, res.URL)
	}
	r.log.Emit(runs.Event{Event: runs.KindStoryStart, Story: id, Session: res.Session, Base: res.Base, Backend: backend, URL: res.URL}, line)
	for _, f := range foreseen {
		r.log.Emit(runs.Event{Event: runs.KindStoryForeseen, Story: id, By: []string{f.With}, Files: f.Files, Level: runs.LevelWarn},
			fmt.Sprintf("%s: warning: its branch and %s's conflict in %s — it runs anyway; landing resolves it (docs/landing.md#conflicts-foreseen)", id, f.With, strings.Join(f.Files, ", ")))
	}
}

// start is a story's start as it completed (told already: announce).
type start struct {
	id  string
	err error
}

// settleAll waits for every start under way, and returns how many there
// were.
func (r *runner) settleAll(ctx context.Context) int {
	n := len(r.starting)
	for len(r.starting) > 0 {
		r.settle(ctx, <-r.starts)
	}
	return n
}

// settle takes a start's outcome into the loop: the story no longer
// holds a slot as being started, and is running (ok) or told why not.
func (r *runner) settle(ctx context.Context, x start) (ok bool) {
	delete(r.starting, x.id)
	id, err := x.id, x.err
	if err != nil && ctx.Err() != nil {
		// Cut short by the stop, which tells the story's state: not a
		// refusal (that would fail the story).
		r.log.Step(stepEpic, "%s: its start was cut short by the stop: %v", id, err)
		r.cut = append(r.cut, id)
		return false
	}
	var ce *control.ConflictError
	var re *control.RunningError
	var ue *control.UnreachableError
	switch {
	case errors.As(err, &ce):
		r.conflicts[id] = ce.Files
	case errors.As(err, &re):
		// Started by someone else meanwhile: followed from the next
		// step — or, a run on GitHub not dispatched from here, waited
		// for (Dispatch), asked again after a pause.
		r.retry[id] = r.o.Now().Add(retryPause)
	case errors.As(err, &ue):
		r.retry[id] = r.o.Now().Add(retryPause)
		r.log.Warn(stepEpic, "%s: could not be started now, tried again in %s: %v", id, retryPause, err)
	case err != nil:
		r.refused[id] = err.Error()
		r.log.Warn(stepEpic, "%s: could not start: %v", id, err)
	default:
		r.seen[id] = readmodel.EpicRunning // told by its start (announce)
		return true
	}
	return false
}

// nothingCanStart tells whether no story is ready (or the cap forbids
// starting one).
func (r *runner) nothingCanStart(st *readmodel.EpicStatus) bool {
	if r.capped {
		return true
	}
	if len(st.AwaitingMerge) > 0 {
		return false // dependents start once those PRs merge
	}
	for _, s := range st.Stories {
		if s.State == readmodel.EpicReady {
			return false
		}
	}
	return true
}

// outcome is the runner's end: exit 1 if any story failed, else 3 if any
// was blocked or held, else 2 if a limit stopped it, else 0.
func (r *runner) outcome(st *readmodel.EpicStatus) (string, int) {
	has := func(states ...string) bool {
		return slices.ContainsFunc(st.Stories, func(s readmodel.EpicStory) bool { return slices.Contains(states, s.State) })
	}
	switch {
	case has(runs.StatusFailed):
		return runs.StatusFailed, runs.ExitFailed
	case has(runs.StatusBlocked, readmodel.EpicHeld, runs.StatusStopped):
		return runs.StatusBlocked, runs.ExitBlocked
	case r.capped || has(runs.StatusTimeout):
		return runs.StatusTimeout, runs.ExitLimit
	case st.Done < st.Total:
		return runs.StatusBlocked, runs.ExitBlocked // waiting on something that never ends (a dangling blocker)
	}
	return runs.StatusCompleted, runs.ExitCompleted
}

// stop ends every running story of the epic (each cleans up as a stopped
// story run does) and reports the runner stopped.
func (r *runner) stop(st *readmodel.EpicStatus) (string, int, *readmodel.EpicStatus) {
	r.log.Step(stepEpic, "stopping: %d running stories", len(st.Running))
	ctx := context.Background()
	var wg sync.WaitGroup
	// A start the stop cut short: its worker may be starting still, not
	// yet holding its lock — or not there at all.
	ids := slices.Clone(st.Running)
	for _, id := range r.cut {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		wg.Go(func() {
			_, err := control.StopStory(ctx, control.StopOptions{Setup: r.setup, Story: id})
			if err != nil && !(errors.Is(err, control.ErrNotRunning) && !slices.Contains(st.Running, id)) {
				r.log.Warn(stepEpic, "stop %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	if now, err := r.state(ctx, nil); err == nil {
		r.report(now)
		st = now
	}
	return runs.StatusStopped, runs.ExitFailed, st
}
