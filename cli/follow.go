package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

const followSynopsis = "follow <story-or-epic> [--root DIR] [--format text|json] [--epic] [--story]"

// runFollow shows a story's or an epic's latest run until it ends, and exits
// with the run's exit code.
func runFollow(env *Env, args []string) int {
	c := newCmdLine("follow")
	target := addTargetArg(c, "output `FORMAT`: text (progress on a terminal) or json (the events, one per line)")
	pos, err := c.parse(args)
	t, err := target.resolve(env, pos, err)
	if err == nil {
		err = t.typo(pos[0])
	}
	if err != nil {
		return c.fail(env, err)
	}
	kind := t.kind
	dir := runs.SessionDir(env.Getenv)
	if err := runs.CheckSessionDir(dir); err != nil {
		return c.fail(env, err)
	}
	rs := runs.Runs(dir, kind, pos[0])
	if len(rs) == 0 {
		return c.fail(env, fmt.Errorf("no run of %s %s in %s: start one with `saga-lsp run %s`", kind, pos[0], dir, pos[0]))
	}
	if r := runs.ReadRun(rs[len(rs)-1].EventsFile); r != nil && r.Backend == readmodel.BackendGitHub && r.Story != "" {
		return followDispatched(env, t.root, r, target.json())
	}
	return followRun(env, rs[len(rs)-1].EventsFile, target.json(), pos[0], t.ws)
}

// followDispatched follows a story dispatched to GitHub Actions: its
// Actions run, found by its run-name when the dispatch did not see it.
func followDispatched(env *Env, root string, r *runs.Run, jsonOut bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	id := r.ActionsRun
	if w := github.ExpectOf(r); id == 0 && w != nil {
		found, err := github.FindRun(ctx, runs.Program(env.Getenv, runs.ProgramGH), root, *w, 0, 0)
		if err != nil {
			fmt.Fprintf(env.Stderr, "saga-lsp follow: story %s was dispatched to GitHub Actions, but its run is not found: %v\n", termtext.Escape(r.Story), err)
			return exitFindings
		}
		id = found.ID
	}
	if !jsonOut {
		fmt.Fprintf(env.Stdout, "story %s on GitHub Actions: %s\n", termtext.Escape(r.Story), termtext.Escape(r.URL))
	}
	return followActions(ctx, env, "follow", root, r.Story, id, jsonOut)
}

// followed is one events file being read: a story's worker or an epic's
// runner.
type followed struct {
	tail runs.Tail
	run  *runs.Run
	err  error // the last read's, but a file not there yet
}

func newFollowed(path string) *followed {
	return &followed{tail: runs.Tail{Path: path}, run: runs.NewRun(path)}
}

// read folds what was appended, handing each event to f too.
func (fl *followed) read(f func(runs.Event)) {
	for {
		n, err := fl.tail.Read(func(e runs.Event) {
			fl.run.Apply(e)
			if f != nil {
				f(e)
			}
		})
		fl.err = err
		if errors.Is(err, fs.ErrNotExist) {
			fl.err = nil
		}
		if n == 0 || err != nil {
			return
		}
	}
}

// followRun shows the run of an events file until it ends: as text a line
// per story's start and end and per task completed, and on a terminal a
// progress line per running story redrawn below them; with json, the
// events as JSON lines. Ctrl-C detaches and leaves the run going. The exit
// code is the run's.
//
// id is what the user named (to follow again after a detach); ws, the
// workspace as the command loaded it, gives a story's task count until its
// worker reports one.
func followRun(env *Env, eventsFile string, jsonOut bool, id string, ws *store.Workspace) int {
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	main := newFollowed(eventsFile)
	stories := map[string]*followed{} // an epic run's workers
	out := &progressView{w: env.Stdout, text: !jsonOut, live: !jsonOut && isTerminal(env.Stdout), ws: ws}
	printEvent := func(e runs.Event) {
		if jsonOut {
			b, _ := json.Marshal(e)
			fmt.Fprintf(env.Stdout, "%s\n", b)
		}
	}
	// Without file watching (err) the tick below still reads on.
	wake, stopWake, _ := fswatch.Wake([]string{filepath.Dir(eventsFile)}, nil)
	defer stopWake()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	dead := 0
	var endedAt time.Time
	for {
		main.read(func(e runs.Event) {
			printEvent(e)
			switch e.Event {
			case runs.KindStoryStart:
				if e.Session != "" && stories[e.Story] == nil {
					stories[e.Story] = newFollowed(runs.EventsFile(runs.OutputFile(filepath.Dir(eventsFile), e.Session)))
				}
				switch {
				case e.Adopted:
					out.line(fmt.Sprintf("↻ %s adopted (started by an earlier runner)", termtext.Escape(e.Story)))
				case e.URL != "":
					out.line(fmt.Sprintf("▶ %s dispatched to GitHub Actions: %s", termtext.Escape(e.Story), termtext.Escape(e.URL)))
				default:
					out.line(fmt.Sprintf("▶ %s started", termtext.Escape(e.Story)))
				}
			case runs.KindStoryEnd:
				line := fmt.Sprintf("%s %s %s", endMark(e.Status), termtext.Escape(e.Story), termtext.Escape(e.Status))
				if e.Message != "" { // what stopped it and the next step
					line += " — " + termtext.Block(e.Message, "    ")
				}
				out.line(line)
			case runs.KindStoryHeld:
				held := fmt.Sprintf("⏸ %s held by %s", termtext.Escape(e.Story), strings.Join(termtext.Escapes(e.By), ", "))
				switch {
				case e.Message != "": // the next step, conflicting files included
					held += ": " + termtext.Escape(e.Message)
				case len(e.Files) > 0:
					held += "; their branches conflict in " + strings.Join(termtext.Escapes(e.Files), ", ")
				}
				out.line(held)
			case runs.KindTaskStatus:
				if e.To == "completed" {
					// The task's id is the model's (TaskUpdate's taskId).
					out.line(fmt.Sprintf("✓ %s", termtext.Escape(e.Task)))
				}
			}
		})
		if main.err != nil { // a FIFO or a link where the events file should be
			out.done()
			fmt.Fprintf(env.Stderr, "saga-lsp follow: %v\n", main.err)
			return exitFindings
		}
		for _, s := range stories {
			s.read(nil)
		}
		out.draw(main.run, stories)
		if main.run.Ended && endedAt.IsZero() {
			endedAt = time.Now()
		}
		// The run is over once its process has exited too (its lock and
		// tmux pane released), so that a `clean` or `run` right after
		// follow never finds it live; a process that lingers is not
		// waited for long.
		if main.run.Ended && (!main.run.Alive() || time.Since(endedAt) > exitGrace) {
			out.done()
			// The story's review loop waits for its person: said once, as
			// its record says (docs/review.md#in-every-face).
			if r := readmodel.RecordedReview(rootOf(ws), main.run.Story); !jsonOut && storyRun(main.run) && r != nil && r.NeedsYou != "" {
				fmt.Fprintln(env.Stdout, termtext.Escape(readmodel.NeedsYouText(r.NeedsYou)))
			}
			fmt.Fprintln(env.Stderr, termtext.Block(main.run.Message, "  "))
			if main.run.ExitCode != nil {
				return *main.run.ExitCode
			}
			return exitFindings
		}
		if !main.run.Ended && main.run.PID > 0 && !main.run.Alive() {
			// One more pass may find its end; then it died without one.
			if dead++; dead > 1 {
				out.done()
				fmt.Fprintf(env.Stderr, "saga-lsp follow: the run's process (pid %d) ended without reporting its end (killed?)\n", main.run.PID)
				return exitFindings
			}
		}
		select {
		case <-ctx.Done():
			out.done()
			fmt.Fprintf(env.Stderr, "saga-lsp follow: detached; the run goes on — `saga-lsp follow %s` watches it again (%s)\n", id, eventsFile)
			return 130
		case <-wake:
		case <-tick.C:
		}
	}
}

// storyRun tells a story's real run from an epic's runner and a dry run.
func storyRun(r *runs.Run) bool {
	k, _, _, ok := runs.ParseSession(r.Session)
	return ok && k == runs.KindStory && !r.DryRun && r.Story != ""
}

// rootOf is the workspace's root ("" without one: no record is read).
func rootOf(ws *store.Workspace) string {
	if ws == nil {
		return ""
	}
	return ws.Root
}

// exitGrace bounds how long follow waits, after a run's end event, for its
// process to exit.
const exitGrace = 10 * time.Second

func endMark(status string) string {
	switch status {
	case runs.StatusCompleted:
		return "✓"
	case runs.StatusBlocked, "held":
		return "⏸"
	}
	return "✗"
}

// progressView prints the permanent lines of a run's text form and, on a
// terminal, draws the running stories' progress below them, redrawn in
// place. In a pipe it prints the permanent lines only: the text form, never
// a redrawn line (docs/commands.md#epic-runs-run--follow--status--stop-epic).
type progressView struct {
	w     io.Writer
	text  bool             // the text form (not --format json)
	live  bool             // and on a terminal: the progress lines too
	ws    *store.Workspace // task counts before a worker reports them
	drawn []string         // the progress block on screen
}

func (v *progressView) clear() {
	for range v.drawn {
		fmt.Fprint(v.w, "\x1b[1A\x1b[2K")
	}
	v.drawn = nil
}

func (v *progressView) line(s string) {
	if !v.text {
		return
	}
	v.clear()
	fmt.Fprintln(v.w, s)
}

func (v *progressView) done() {
	if v.live {
		v.clear()
	}
}

// draw shows one line per running story (or the story of a story run).
func (v *progressView) draw(main *runs.Run, stories map[string]*followed) {
	if !v.live {
		return
	}
	var lines []string
	if main.Epic == "" {
		lines = append(lines, v.progressLine(main.Story, main))
	} else {
		ids := make([]string, 0, len(stories))
		for id, s := range stories {
			if !s.run.Ended {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			lines = append(lines, v.progressLine(id, stories[id].run))
		}
	}
	if slices.Equal(lines, v.drawn) {
		return // an event that changes nothing on screen is not redrawn
	}
	v.clear()
	for _, l := range lines {
		fmt.Fprintln(v.w, l)
	}
	v.drawn = lines
}

// progressLine is "story ▕████░░░░▏ 3/7 · write-tests". Until the worker
// reports its count (hydration), the story's tasks as loaded are shown.
func (v *progressView) progressLine(id string, r *runs.Run) string {
	done, total, current := r.Progress()
	if total == 0 && v.ws != nil {
		if s := v.ws.Story(id); s != nil {
			done, total = s.Done(), len(s.Tasks)
		}
	}
	const width = 16
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	line := fmt.Sprintf("%s ▕%s▏ %d/%d", termtext.Escape(id), bar, done, total)
	if current != "" {
		line += " · " + termtext.Escape(current)
	}
	return line
}
