package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
	"github.com/saga-ai/saga-lsp/store/runs"
)

// taskTools are named in --allowedTools: Claude Code offers its Task tools
// to current models only when asked for by name.
const taskTools = "TaskList TaskGet TaskUpdate TaskCreate"

// loop spawns headless runs until a stop rule fires.
func (r *run) loop(ctx context.Context) (status string, code int) {
	deadline := r.started.Add(r.o.MaxDuration())
	noProgress := 0
	for {
		done, total := r.progress()
		if total > 0 && done == total {
			return "completed", ExitCompleted
		}
		switch {
		case ctx.Err() != nil:
			return "stopped", ExitFailed
		case r.cycles >= r.o.MaxCycles:
			r.j.step("loop", "stopping: %d runs reached --max-cycles with %d/%d tasks done", r.cycles, done, total)
			return "timeout", ExitLimit
		case !r.o.Now().Before(deadline):
			r.j.step("loop", "stopping: --max-time %g minutes reached with %d/%d tasks done", r.o.MaxTime, done, total)
			return "timeout", ExitLimit
		}
		r.cycles++
		exit, err := r.headless(ctx, deadline)
		r.reconcile(context.WithoutCancel(ctx))
		after, _ := r.progress()
		if ctx.Err() != nil {
			return "stopped", ExitFailed
		}
		if !r.o.Now().Before(deadline) { // the run was interrupted by --max-time
			r.j.step("loop", "stopping: --max-time %g minutes reached with %d/%d tasks done", r.o.MaxTime, after, total)
			return "timeout", ExitLimit
		}
		if err != nil {
			r.j.warn("loop", "run %d could not start: %v", r.cycles, err)
			return "failed", ExitFailed
		}
		if exit != 0 {
			r.j.step("loop", "run %d failed with exit code %d; the story stops here (no automatic retry)", r.cycles, exit)
			return "failed", ExitFailed
		}
		if blocked, text := r.newBlocker(); blocked {
			r.j.step("loop", "blocked: %s — resolve it in journal.md, then run the story again", text)
			return "blocked", ExitBlocked
		}
		if after > done {
			noProgress = 0
		} else if noProgress++; noProgress >= 2 {
			r.j.step("loop", "stopping: two runs in a row completed no task (%d/%d done)", after, total)
			return "timeout", ExitLimit
		}
	}
}

// newBlocker reports a blocker written to the journal during the runs.
func (r *run) newBlocker() (bool, string) {
	data, err := os.ReadFile(filepath.Join(r.storyDir(), "journal.md"))
	if err != nil {
		return false, ""
	}
	blocked, text, n := store.JournalBlocker(data)
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
func (r *run) headless(ctx context.Context, deadline time.Time) (int, error) {
	s, err := r.story()
	if err != nil {
		return 1, err
	}
	bin, args := r.o.Claude, r.claudeArgs(prompt(s))
	if r.o.DryRun {
		bin, args = r.o.Self, append([]string{"__agent"}, args...)
	}
	path := lookPath(bin)
	if path == "" {
		return 1, fmt.Errorf("%s not found: install Claude Code, set %s, or use --dry-run", bin, runs.EnvClaude)
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	cmd := exec.Command(path, args...)
	cmd.Dir = r.wt
	cmd.Env = append(os.Environ(),
		claudetasks.EnvEnableTasks+"=true",
		claudetasks.EnvTaskListID+"="+r.listID,
	)
	cmd.Env = append(cmd.Env, runs.StoryEnv{Story: r.o.Story, TaskList: r.listID, ProjectDir: r.wt,
		SessionDir: r.o.SessionDir, Session: r.o.Session, EventsFile: r.eventsFile()}.Vars()...)
	// Its own process group: stopping the run reaches the hooks it spawned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 1, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 1, err
	}
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	r.j.emit(runs.Event{Event: runs.KindRunStart, Cycle: r.cycles, PID: cmd.Process.Pid, TaskList: r.listID},
		fmt.Sprintf("run %d: %s (pid %d)", r.cycles, filepath.Base(path), cmd.Process.Pid))
	// Stop on SIGINT/SIGTERM or --max-time: interrupt, then kill after a grace period.
	stopped := make(chan struct{})
	go func() {
		select {
		case <-stopped:
		case <-ctx.Done():
			terminate(cmd, stopped)
		case <-rctx.Done():
			terminate(cmd, stopped)
		}
	}()
	errDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.j.emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: sc.Text(), Level: runs.LevelWarn}, "claude: "+sc.Text())
		}
		close(errDone)
	}()
	r.follow(stdout)
	<-errDone
	err = cmd.Wait()
	close(stopped)
	code := exitCodeOf(err)
	done, total := r.progress()
	r.j.emit(runs.Event{Event: runs.KindRunEnd, Cycle: r.cycles, ExitCode: runs.Int(code), Done: runs.Int(done), Total: runs.Int(total)},
		fmt.Sprintf("run %d ended with exit code %d: %d/%d tasks done", r.cycles, code, done, total))
	return code, nil
}

func terminate(cmd *exec.Cmd, stopped <-chan struct{}) {
	pgid := -cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGINT)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		syscall.Kill(pgid, syscall.SIGKILL)
	}
}

// claudeArgs are the flags of a headless run (design.md §6).
func (r *run) claudeArgs(prompt string) []string {
	return []string{
		"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--model", r.o.Model,
		"--permission-mode", r.o.PermissionMode,
		"--settings", r.hookSettings(),
		"--allowedTools", taskTools,
	}
}

// hookSettings is the --settings JSON registering saga-lsp's hooks for the
// run: session context, scope validation on writes, status sync on TaskUpdate.
func (r *run) hookSettings() string {
	return claudetasks.HookSettings(runs.HookCommand(r.o.Self), nil)
}

// prompt builds a headless run's prompt from the story (empty fields left out).
func prompt(s *store.Story) string {
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
	journal := filepath.Join(".saga", "stories", s.ID, "journal.md")
	fmt.Fprintf(&b, `
Execute the tasks in the task list using TaskList, TaskGet, and TaskUpdate: take the next pending task whose blockers are completed, set it in_progress, do the work, set it completed, and repeat until every task is completed.

Record key decisions in %s as "## <ISO time> decision" entries. If you hit an obstacle that needs a human decision, append "## <ISO time> blocker" with what you need, leave the task in_progress, and stop.
`, journal)
	return b.String()
}

// follow parses the stream-json output as it arrives: task status changes
// and the assistant's text become events.
func (r *run) follow(stdout interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
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
			ToolUseResult json.RawMessage `json:"tool_use_result"`
			IsError       bool            `json:"is_error"`
			NumTurns      int             `json:"num_turns"`
		}
		if json.Unmarshal(line, &m) != nil {
			r.j.emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: string(line)}, "claude: "+string(line))
			continue
		}
		switch m.Type {
		case "assistant":
			for _, c := range m.Message.Content {
				switch c.Type {
				case "text":
					if t := strings.TrimSpace(c.Text); t != "" {
						r.j.emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: clip(t, 2000)}, "claude: "+clip(t, 300))
					}
				case "tool_use":
					r.j.emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: c.Name + " " + clip(string(c.Input), 500)}, "tool: "+c.Name+" "+clip(string(c.Input), 200))
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
				r.j.emit(runs.Event{Event: runs.KindTaskStatus, Cycle: r.cycles, Task: res.TaskID, From: res.StatusChange.From, To: res.StatusChange.To, Source: runs.SourceClaude},
					fmt.Sprintf("task %s: %s → %s", res.TaskID, res.StatusChange.From, res.StatusChange.To))
			}
		case "result":
			r.j.emit(runs.Event{Event: runs.KindRunOutput, Cycle: r.cycles, Message: fmt.Sprintf("result %s after %d turns", m.Subtype, m.NumTurns)}, "")
		}
	}
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
	list, err := claudetasks.Read(r.listDir)
	if err != nil {
		r.j.warn("reconcile", "read the task list: %v", err)
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
		want := claudetasks.FromClaudeTask(ct)
		if want == t.Status || (want != store.StatusPending && want != store.StatusInProgress && want != store.StatusCompleted) {
			continue
		}
		if err := r.setTaskStatus(ctx, t.ID, want); err != nil {
			r.j.warn("reconcile", "%s: %v", t.ID, err)
			continue
		}
		r.j.emit(runs.Event{Event: runs.KindTaskStatus, Task: t.ID, From: t.Status, To: want, Source: runs.SourceClaude},
			fmt.Sprintf("reconcile: %s %s → %s (from the task list)", t.ID, t.Status, want))
	}
}
