package worker

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// taskTools are named in --allowedTools: Claude Code offers its Task tools
// to current models only when asked for by name.
const taskTools = "TaskList TaskGet TaskUpdate TaskCreate"

// runResult is what one headless run ended with: its exit code and the
// stream's final result line (claude -p exits 0 when interrupted and
// retries API errors itself before exiting 1, so the code alone does not
// tell).
type runResult struct {
	exit          int
	haveResult    bool
	isError       bool
	subtype       string
	terminal      string
	cost          float64
	costKnown     bool // the result message said total_cost_usd
	stopRequested bool // the worker asked the run to stop (SIGINT/SIGTERM, --max-time)
}

// failure describes a run that did not end well, "" for one that did.
func (res runResult) failure() string {
	switch {
	case res.exit != 0:
		return fmt.Sprintf("exited with code %d", res.exit)
	case !res.haveResult:
		return "ended without a result (interrupted, or its output was cut)"
	case res.isError:
		why := res.subtype
		if res.terminal != "" {
			why += ", " + res.terminal
		}
		return "ended with an error result (" + why + ")"
	}
	return ""
}

// loop spawns headless runs until a stop rule fires; after each run the
// agent's work is committed and pushed. Every stop but completion says
// what stopped it and the next step (r.why).
func (r *run) loop(ctx context.Context) (status string, code int) {
	deadline := r.started.Add(r.o.MaxDuration())
	noProgress := 0
	again := r.runAgain() + " continues from here"
	for {
		done, total := r.progress()
		if total > 0 && done == total {
			return runs.StatusCompleted, runs.ExitCompleted
		}
		switch {
		case ctx.Err() != nil:
			return runs.StatusStopped, runs.ExitFailed
		case r.cycles >= r.o.MaxCycles:
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: %d runs reached --max-cycles with %d/%d tasks done; %s (--max-cycles to allow more)", r.cycles, done, total, again)
		case !r.o.Now().Before(deadline):
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: --max-time %g minutes reached with %d/%d tasks done; %s (--max-time to allow more)", r.o.MaxTime, done, total, again)
		case r.o.MaxCost > 0 && r.cost >= r.o.MaxCost:
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: the runs cost $%.2f, reaching --max-cost $%.2f, with %d/%d tasks done; %s (--max-cost to allow more)", r.cost, r.o.MaxCost, done, total, again)
		case r.epicCapped():
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: the epic run's spend reached its --max-cost, with %d/%d tasks done; `saga-lsp run <epic> --max-cost USD` with a higher cap continues", done, total)
		}
		r.cycles++
		before := r.statuses()
		r.skipEvents()
		res, err := r.headless(ctx, deadline)
		if res.stopRequested {
			r.reconcile(context.WithoutCancel(ctx))
			r.unverify(context.WithoutCancel(ctx), before)
		}
		evs := r.runEvents()
		r.countRefused(evs)
		r.requireVerdicts(context.WithoutCancel(ctx), before, evs)
		exhausted := r.takeRefusals(context.WithoutCancel(ctx), evs)
		r.commitWork(context.WithoutCancel(ctx), fmt.Sprintf("run %d", r.cycles), true)
		after, _ := r.progress()
		if ctx.Err() != nil {
			return runs.StatusStopped, runs.ExitFailed
		}
		if !r.o.Now().Before(deadline) { // the run was interrupted by --max-time
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: --max-time %g minutes reached with %d/%d tasks done; %s (--max-time to allow more)", r.o.MaxTime, after, total, again)
		}
		if err != nil {
			return r.stopped(runs.StatusFailed, runs.ExitFailed, "run %d could not start: %v", r.cycles, err)
		}
		if why := res.failure(); why != "" {
			return r.stopped(runs.StatusFailed, runs.ExitFailed, "run %d %s; the story stops here (no automatic retry): see the run's output above, then %s", r.cycles, why, r.runAgain())
		}
		if blocked, text := r.newBlocker(); blocked {
			return r.stopped(runs.StatusBlocked, runs.ExitBlocked, "blocked: %s — resolve it in %s, then %s", text, store.JournalFileRel(r.o.Story), r.runAgain())
		}
		if exhausted != nil {
			r.failedCheck = r.failedText(exhausted)
			r.journalNote("the story stops: " + r.failedCheck)
			return r.stopped(runs.StatusFailed, runs.ExitFailed, "%s", r.failedCheck)
		}
		switch {
		case after > done || len(r.refusals) > 0:
			// A refused completion is an attempt: the refusals' own count
			// (--max-check-failures) decides when to stop.
			noProgress = 0
		case noProgress < 1:
			noProgress++
		default:
			return r.stopped(runs.StatusTimeout, runs.ExitLimit, "stopping: two runs in a row completed no task (%d/%d done); see the runs' output above, then %s", after, total, r.runAgain())
		}
	}
}

// stopped ends the loop with status and code, logging why (an error for a
// failed run) and keeping it for the worker's end event.
func (r *run) stopped(status string, code int, format string, args ...any) (string, int) {
	r.why = fmt.Sprintf(format, args...)
	if status == runs.StatusFailed {
		r.j.Fail(runs.StepLoop, r.why)
	} else {
		r.j.Step(runs.StepLoop, "%s", r.why)
	}
	return status, code
}

// epicCapped tells whether the epic runner that started this worker
// recorded that the epic's spend reached its cap: no story starts another
// headless run then (the current one finishes).
func (r *run) epicCapped() bool {
	path := runs.Getenv(r.o.Env, runs.EnvEpicEvents)
	if path == "" {
		return false
	}
	run := runs.ReadRun(path)
	return run != nil && run.CapReached
}

// newBlocker reports a blocker written to the journal during the runs.
func (r *run) newBlocker() (bool, string) {
	blocked, text, n := store.JournalBlocker(r.readJournal(runs.StepLoop))
	if blocked && n > r.blockers {
		r.blockers = n
		if text == "" {
			text = "a blocker was recorded"
		}
		return true, text
	}
	return false, ""
}

// headless runs one `claude -p` in the worktree and follows its stream.
func (r *run) headless(ctx context.Context, deadline time.Time) (runResult, error) {
	res := runResult{exit: 1}
	s, err := r.story()
	if err != nil {
		return res, err
	}
	bin, args := r.o.Claude, r.claudeArgs(prompt(s, r.bash, r.handoffs)+r.reviewPrompt()+r.refusalPrompt())
	if r.o.DryRun {
		bin, args = r.o.Self, append([]string{"__agent"}, args...)
	}
	path := lookPath(bin)
	if path == "" {
		return res, fmt.Errorf("%s not found: install Claude Code, set %s, or use --dry-run", bin, runs.EnvClaude)
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	cmd := exec.Command(path, args...)
	cmd.Dir = r.wt
	cmd.Env = append(agentEnviron(os.Environ()), claudecode.EnvTaskListID+"="+r.listID)
	cmd.Env = append(cmd.Env, runEnv(r.cache, r.warm)...)
	env := runs.StoryEnv{Story: r.o.Story, TaskList: r.listID, ProjectDir: r.wt,
		SessionDir: r.o.SessionDir, Session: r.o.Session, EventsFile: r.eventsFile(), CacheDir: r.cache, WarmGoCache: r.warm.Go, Bash: r.bash, ChecksTimeout: r.checksTimeout(),
		AllowUnconfinedChecks: r.o.AllowUnconfinedChecks}
	if r.checks != nil {
		env.ForkPoint, env.ChecksFile = r.checks.ForkPoint, r.checksFile
	}
	cmd.Env = append(cmd.Env, env.Vars()...)
	// Its own process group, ended with it; on Linux it dies with the
	// worker (supervise.ChildGroup, agent.go).
	cmd.SysProcAttr = supervise.ChildGroup()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	pid := cmd.Process.Pid
	// Whatever the agent leaves running in its group (a server started in
	// the background, a hook) ends with it, killed before it is reaped so
	// that the group's id cannot have been reused.
	grouped := make(chan bool, 1)
	go func() {
		exited := supervise.AwaitExit(pid)
		if exited {
			supervise.KillGroup(pid)
		}
		grouped <- exited
	}()
	start, _ := supervise.ProcStart(pid)
	r.j.Emit(runs.Event{Event: runs.KindRunStart, Cycle: r.cycles, PID: pid, ProcStart: start, TaskList: r.listID},
		fmt.Sprintf("run %d: %s (pid %d)", r.cycles, filepath.Base(path), pid))
	// Stop on SIGINT/SIGTERM or --max-time: interrupt, then kill after a grace period.
	stopped := make(chan struct{})
	var stopRequested atomic.Bool
	go func() {
		select {
		case <-stopped:
		case <-ctx.Done():
			stopRequested.Store(true)
			terminate(cmd, stopped)
		case <-rctx.Done():
			stopRequested.Store(true)
			terminate(cmd, stopped)
		}
	}()
	errDone := make(chan struct{})
	go func() {
		skipped := eachLine(stderr, maxStderrLine, func(line []byte) {
			text := string(line)
			r.j.Emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: text, Level: runs.LevelWarn}, r.agentName()+": "+text)
		})
		if skipped > 0 {
			r.j.Warn(runs.StepLoop, "run %d: skipped %d line(s) of its stderr longer than %d KB", r.cycles, skipped, maxStderrLine>>10)
		}
		close(errDone)
	}()
	res = r.follow(stdout)
	<-errDone
	killed := <-grouped
	err = cmd.Wait()
	if !killed {
		supervise.KillGroup(pid) // where the exit cannot be awaited unreaped (runs/proc_other.go)
	}
	close(stopped)
	// What the agent left in its story's folder is put in order before
	// the story is read again (its links are never followed).
	if err := r.guardStoryFolder(context.WithoutCancel(ctx)); err != nil {
		r.j.Warn(runs.StepLoop, "%v", err) // the commit refuses it too
	}
	res.exit, res.stopRequested = exitCodeOf(err), stopRequested.Load()
	r.cost += res.cost
	if !res.costKnown {
		r.costUnknown++
	}
	done, total := r.progress()
	r.j.Emit(runs.Event{Event: runs.KindRunEnd, Cycle: r.cycles, ExitCode: runs.Int(res.exit), Done: runs.Int(done), Total: runs.Int(total),
		Cost: runs.Float(res.cost), Status: res.subtype},
		fmt.Sprintf("run %d ended with exit code %d (%s): %d/%d tasks done", r.cycles, res.exit, cmp.Or(res.subtype, "no result"), done, total))
	return res, nil
}

// claudeArgs are the flags of a headless run (docs/worker.md#the-loop, docs/worker.md#with-the-real-claude-code): only the
// user's settings and the worker's own --settings load — never a
// worktree-local .claude/settings*.json or .mcp.json the agent could have
// written — and Bash runs as bashMode decided.
func (r *run) claudeArgs(prompt string) []string {
	var extra map[string]any
	allowed := taskTools
	var deny []string
	switch r.bash {
	case runs.BashSandboxed:
		extra = sandboxSettings(r.cache, r.denyWrite())
	case runs.BashUnsandboxed:
		allowed += " Bash"
	default:
		deny = []string{"--disallowedTools", "Bash"}
	}
	args := []string{
		"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--model", r.o.Model,
		"--permission-mode", r.o.PermissionMode,
		"--setting-sources", "user",
		"--strict-mcp-config",
		"--settings", claudecode.HookSettings(runs.HookCommand(runs.HookProgram(r.o.Self)), r.checksTimeout(), extra),
		"--allowedTools", allowed,
	}
	return append(args, deny...)
}

// prompt builds a headless run's prompt from the story (empty fields left
// out), with what the run may do with Bash.
func prompt(s *store.Story, bash string, handoffs []store.Handoff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are working on: %s\n", s.Title)
	if s.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Description)
	}
	if s.Guidance != "" {
		fmt.Fprintf(&b, "\nGuidance: %s\n", s.Guidance)
	}
	if s.DoneWhen != "" {
		fmt.Fprintf(&b, "\nDone when: %s\n", s.DoneWhen)
	}
	if s.Avoid != "" {
		fmt.Fprintf(&b, "\nAvoid: %s\n", s.Avoid)
	}
	b.WriteString(handoffPrompt(handoffs))
	journal := filepath.Join(".saga", "stories", s.ID, "journal.md")
	fmt.Fprintf(&b, `
Execute the tasks in the task list using TaskList, TaskGet, and TaskUpdate: take the next pending task whose blockers are completed, set it in_progress, do the work, set it completed, and repeat until every task is completed.

Record key decisions in %s as "## <ISO time> decision" entries. If you hit an obstacle that needs a human decision, append "## <ISO time> blocker" with what you need, leave the task in_progress, and stop.

Do not commit: the worker commits and pushes everything you leave in this working directory after each run. Do not edit the task or story JSON files: task statuses are recorded for you.
`, journal)
	switch bash {
	case runs.BashSandboxed:
		b.WriteString("Bash runs in a sandbox: you may write inside this working directory only; build caches are set up for you. The repository's git directory is read-only: git status, log, diff and show work; add, commit, branch and checkout do not.\n")
	case runs.BashOff:
		b.WriteString("Bash is not available in this run: use the file tools.\n")
	}
	return b.String()
}

// follow parses the stream-json output as it arrives: task status changes
// and the assistant's text become events,
// and the final result line is returned.
func (r *run) follow(stdout io.Reader) (res runResult) {
	skipped := eachLine(stdout, maxStreamLine, func(line []byte) {
		var m struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			Message struct {
				Content []struct {
					Type  string          `json:"type"`
					Text  string          `json:"text"`
					Name  string          `json:"name"`
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			} `json:"message"`
			ToolUseResult  json.RawMessage `json:"tool_use_result"`
			IsError        bool            `json:"is_error"`
			NumTurns       int             `json:"num_turns"`
			TotalCostUSD   *float64        `json:"total_cost_usd"`
			TerminalReason string          `json:"terminal_reason"`
		}
		if json.Unmarshal(line, &m) != nil {
			text := clip(string(line), 2000)
			r.j.Emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: text}, r.agentName()+": "+text)
			return
		}
		switch m.Type {
		case "assistant":
			for _, c := range m.Message.Content {
				switch c.Type {
				case "text":
					if t := strings.TrimSpace(c.Text); t != "" {
						r.j.EmitLines(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: clip(t, 2000)}, r.agentName()+": "+clip(t, 300))
					}
				case "tool_use":
					r.j.Emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: c.Name + " " + clip(string(c.Input), 500)}, "tool: "+c.Name+" "+clip(string(c.Input), 200))
				}
			}
		case "user":
			var res struct {
				TaskID       string `json:"taskId"`
				Success      bool   `json:"success"`
				StatusChange *struct {
					From string `json:"from"`
					To   string `json:"to"`
				} `json:"statusChange"`
			}
			if len(m.ToolUseResult) > 0 && json.Unmarshal(m.ToolUseResult, &res) == nil && res.Success && res.StatusChange != nil {
				r.j.Emit(runs.Event{Event: runs.KindTaskStatus, Cycle: r.cycles, Task: res.TaskID, From: res.StatusChange.From, To: res.StatusChange.To, Source: runs.SourceClaude},
					fmt.Sprintf("task %s: %s → %s", res.TaskID, res.StatusChange.From, res.StatusChange.To))
			}
		case "result":
			res = runResult{haveResult: true, isError: m.IsError, subtype: m.Subtype, terminal: m.TerminalReason, costKnown: m.TotalCostUSD != nil}
			if m.TotalCostUSD != nil {
				res.cost = *m.TotalCostUSD
			}
			r.j.Emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: fmt.Sprintf("result %s after %d turns", m.Subtype, m.NumTurns)}, "")
		}
	})
	if skipped > 0 {
		r.j.Warn(runs.StepLoop, "run %d: skipped %d line(s) of its output longer than %d MB", r.cycles, skipped, maxStreamLine>>20)
	}
	return res
}

// The longest line of a run's output the worker looks at: a stream-json
// line (a tool result quoting a big file) and a line of stderr. A longer
// line is skipped — its bytes read and dropped, never held — and the rest
// of the output still read: the run is never left blocked on a full pipe.
const (
	maxStreamLine = 16 << 20
	maxStderrLine = 64 << 10
)

// eachLine calls f with each line of rd (without its newline) up to max
// bytes long, reading rd to its end whatever it holds, and returns how many
// longer lines it skipped.
func eachLine(rd io.Reader, max int, f func(line []byte)) (skipped int) {
	br := bufio.NewReaderSize(rd, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case skipping:
		case len(line)+len(chunk) > max+1:
			skipping, line = true, line[:0]
			skipped++
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !skipping && len(line) > 0 {
			f(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")))
		}
		line, skipping = line[:0], false
		if err != nil {
			return skipped
		}
	}
}

// agentName labels the agent's lines in the log: the simulated agent of a
// dry run is never mistaken for Claude Code.
func (r *run) agentName() string {
	if r.o.DryRun {
		return "simulated agent"
	}
	return "claude"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// reconcile copies statuses from the task list into the worktree's .saga,
// the fallback when a hook failed (the hook normally did it already).
func (r *run) reconcile(ctx context.Context) {
	if r.listDir == "" {
		return
	}
	list, err := claudecode.Read(r.listDir)
	if err != nil {
		r.j.Warn("reconcile", "read the task list: %v", err)
		return
	}
	s, err := r.story()
	if err != nil {
		return
	}
	for _, t := range s.Tasks {
		ct, ok := list[t.ID]
		if !ok {
			continue
		}
		want := claudecode.FromClaudeTask(ct)
		if want == t.Status || (want != store.StatusPending && want != store.StatusInProgress && want != store.StatusCompleted) {
			continue
		}
		if err := r.setTaskStatus(ctx, t.ID, want); err != nil {
			r.j.Warn("reconcile", "%s: %v", t.ID, err)
			continue
		}
		r.j.Emit(runs.Event{Event: runs.KindTaskStatus, Task: t.ID, From: t.Status, To: want, Source: runs.SourceClaude},
			fmt.Sprintf("reconcile: %s %s → %s (from the task list)", t.ID, t.Status, want))
	}
}
