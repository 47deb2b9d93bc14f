package agentsim

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// Script is the simulated model's behaviour in a run. Every script first
// checks that the Task tools are offered (TaskList and TaskUpdate; TaskGet
// is used when offered): if not, the model says it cannot see a task list
// and the run ends successfully without touching anything. When they are
// deferred, it loads them with ToolSearch before its first TaskList.
//
// "The next task" is always the first task, in TaskList order (numeric IDs
// numerically, then the others by string order), that is pending and whose
// blockers are all completed (TaskList's blockedBy is empty). Working on a
// task is: TaskGet, TaskUpdate status in_progress, the task description's
// SIMAGENT lines (see runDirectives), Write "<cwd>/saga-work/<story>/<task-id>.md"
// ("<cwd>/saga-work/<task-id>.md" without $SAGA_STORY_ID; see workDir)
// describing the task and the attempt ("Attempt N.", after a Read when the
// file already exists), TaskUpdate status completed. A task whose update or
// Write fails (a hook or the permission check refused it) is left as it is
// and not tried again in the run; one whose completion a TaskCompleted hook
// refused is tried again once no pending task is ready (TaskGet, SIMAGENT
// lines, Write, TaskUpdate completed), up to 3 attempts in all. The prompt's
// SIMAGENT lines run before anything else, and the model's last answer ends
// with what it saw of them.
type Script string

const (
	// ScriptAll (the default, and what saga-lsp's --dry-run uses): TaskList,
	// work on the next task, TaskList again, … until no task is ready; exit
	// 0.
	ScriptAll Script = "all"
	// ScriptOne completes exactly one task (the next one), then ends; exit 0.
	ScriptOne Script = "one"
	// ScriptCrash takes the next task to in_progress and then stops
	// abruptly: exit 1, no result line, no Stop or SessionEnd hooks — like a
	// killed process.
	ScriptCrash Script = "crash"
	// ScriptIdle lists the tasks and ends successfully without changing
	// anything.
	ScriptIdle Script = "idle"
	// ScriptBlocker takes the next task to in_progress, appends a blocker
	// entry "## <RFC3339 UTC> blocker\n<text>\n" to the story journal
	// <cwd>/.saga/stories/<SAGA_STORY_ID>/journal.md (SAGA_STORY_PATH when
	// SAGA_STORY_ID is unset; an absolute SAGA_STORY_PATH is the story
	// folder itself) with Read+Edit, or Write for a new or empty journal,
	// and ends successfully. The text is $SAGA_STANDIN_BLOCKER or a default
	// naming the task.
	ScriptBlocker Script = "blocker"
	// ScriptEscape first tries to Write outside its scope —
	// "<cwd>/../outside.txt", "/etc/saga-escape" and
	// "<cwd>/.saga/epics/x.json" (absolute paths, as the model writes them;
	// the first one is left uncleaned) — and reports each outcome ("denied:
	// <what the model saw>" or "WRITTEN") in an assistant text line, then
	// works like ScriptAll.
	ScriptEscape Script = "escape"
	// ScriptNoHooks works like ScriptAll as if run with --bare: no hooks
	// fire at all.
	ScriptNoHooks Script = "nohooks"
	// ScriptSlow works like ScriptAll, pausing before each model turn for
	// $SAGA_STANDIN_DELAY_MS milliseconds (default 200) — for stop/SIGTERM
	// tests.
	ScriptSlow Script = "slow"
)

func scripts() []Script {
	return []Script{ScriptAll, ScriptOne, ScriptCrash, ScriptIdle, ScriptBlocker, ScriptEscape, ScriptNoHooks, ScriptSlow}
}

func (sc Script) valid() bool {
	for _, s := range scripts() {
		if s == sc {
			return true
		}
	}
	return false
}

func scriptNames() []string {
	var out []string
	for _, s := range scripts() {
		out = append(out, string(s))
	}
	return out
}

// listed is a TaskList entry as the model sees it.
type listed struct {
	id, subject, status string
	blockedBy           []string
}

func (s *session) runScript() error {
	if len(s.context) > 0 {
		s.lead = "Session context:\n" + strings.Join(s.context, "\n\n")
	}
	if err := s.runDirectives(s.args.prompt); err != nil {
		return err
	}
	if !s.taskTools {
		return s.say("I can't see a task list in this session: the Task tools (TaskList, TaskGet, TaskUpdate) are not available to me, so there is nothing I can work on.")
	}
	switch s.script {
	case ScriptIdle:
		tasks, err := s.listTasks()
		if err != nil {
			return err
		}
		return s.say(fmt.Sprintf("There are %d task(s) in the list. I was asked to look only, so I changed nothing.", len(tasks)))
	case ScriptCrash:
		tasks, err := s.listTasks()
		if err != nil {
			return err
		}
		if t := next(tasks, nil); t != nil {
			if _, err := s.startTask(t); err != nil {
				return err
			}
		}
		return errCrash
	case ScriptBlocker:
		return s.blocker()
	case ScriptEscape:
		return s.escape()
	}
	summary, err := s.workLoop(s.script == ScriptOne)
	if err != nil {
		return err
	}
	return s.say(summary)
}

// loadTaskTools loads the Task tools the model uses with ToolSearch when
// they are deferred (before its first TaskList), as a model does when its
// system prompt lists them as deferred:
// {"query":"select:TaskList,TaskGet,TaskUpdate","max_results":5}.
func (s *session) loadTaskTools() error {
	var names []string
	for _, t := range []string{"TaskList", "TaskGet", "TaskUpdate"} {
		if s.deferred[t] {
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return nil
	}
	lead := s.takeLead()
	if lead == "" {
		lead = "Loading the task tools."
	}
	_, err := s.call("ToolSearch", newObj("query", "select:"+strings.Join(names, ","), "max_results", 5), lead)
	return err
}

// next is the first ready task not yet tried.
func next(tasks []listed, tried map[string]bool) *listed {
	for i := range tasks {
		t := &tasks[i]
		if t.status == statusPending && len(t.blockedBy) == 0 && !tried[t.id] {
			return t
		}
	}
	return nil
}

func (s *session) listTasks() ([]listed, error) {
	if err := s.loadTaskTools(); err != nil {
		return nil, err
	}
	res, err := s.call("TaskList", newObj(), s.takeLead())
	if err != nil || res.isError {
		return nil, err
	}
	var out []listed
	arr, _ := res.structured.(*obj).vals["tasks"].([]any)
	for _, e := range arr {
		o := e.(*obj)
		l := listed{id: o.str("id"), subject: o.str("subject"), status: o.str("status")}
		l.blockedBy, _ = o.vals["blockedBy"].([]string)
		out = append(out, l)
	}
	return out, nil
}

// startTask reads a task (readTask) and takes it to in_progress. It
// returns the description, or a problem text in a *taskFailure.
func (s *session) startTask(t *listed) (desc string, err error) {
	if desc, err = s.readTask(t); err != nil {
		return "", err
	}
	res, err := s.call("TaskUpdate", newObj("taskId", t.id, "status", statusInProgress), s.takeLead())
	if err != nil {
		return "", err
	}
	if failed := updateFailure(res); failed != "" {
		return "", &taskFailure{failed}
	}
	return desc, nil
}

// readTask reads a task with TaskGet (when offered) and returns its
// description.
func (s *session) readTask(t *listed) (desc string, err error) {
	if !s.available["TaskGet"] {
		return "", nil
	}
	res, err := s.call("TaskGet", newObj("taskId", t.id), s.takeLead())
	if err != nil {
		return "", err
	}
	if o, ok := res.structured.(*obj); ok {
		if tv, ok := o.get("task"); ok {
			if to, ok := tv.(*obj); ok {
				desc = to.str("description")
			}
		}
	}
	return desc, nil
}

type taskFailure struct{ msg string }

func (f *taskFailure) Error() string { return f.msg }

func updateFailure(res toolResult) string {
	if res.isError {
		return res.text
	}
	if o, ok := res.structured.(*obj); ok {
		if v, _ := o.get("success"); v != true {
			return o.str("error")
		}
	}
	return ""
}

// maxAttempts bounds how often the model tries to complete a task whose
// completion a TaskCompleted hook refused.
const maxAttempts = 3

// workLoop works through the ready tasks (only the first success when
// once) and returns the closing summary. A task whose completion a
// TaskCompleted hook refused stays in progress; once no pending task is
// ready, the model works on it again (TaskGet, its work file rewritten with
// the attempt number, TaskUpdate completed), up to maxAttempts in all, then
// leaves it.
func (s *session) workLoop(once bool) (string, error) {
	tried := map[string]bool{}
	refused := map[string]int{} // task → refused completions
	var done, problems []string
	left := map[string]string{} // task → the last refusal, for tasks left unfinished
	for {
		tasks, err := s.listTasks()
		if err != nil {
			return "", err
		}
		t, attempt := next(tasks, tried), 1
		if t == nil {
			t = retry(tasks, refused)
			if t == nil {
				break
			}
			attempt = refused[t.id] + 1
		}
		tried[t.id] = true
		problem, vetoed, err := s.work(t, attempt)
		if err != nil {
			return "", err
		}
		switch {
		case vetoed:
			refused[t.id]++
			left[t.id] = problem
			continue
		case problem != "":
			problems = append(problems, fmt.Sprintf("#%s (%s)", t.id, problem))
			continue
		}
		delete(left, t.id)
		done = append(done, "#"+t.id)
		if once {
			break
		}
	}
	for _, t := range slices.Sorted(maps.Keys(left)) {
		problems = append(problems, fmt.Sprintf("#%s (refused %d time(s): %s)", t, refused[t], left[t]))
	}
	var parts []string
	if len(done) > 0 {
		parts = append(parts, fmt.Sprintf("Completed %d task(s): %s.", len(done), strings.Join(done, ", ")))
	} else {
		parts = append(parts, "No task completed: no pending task is ready.")
	}
	if len(problems) > 0 {
		parts = append(parts, "Could not finish "+strings.Join(problems, "; ")+".")
	}
	return strings.Join(parts, " "), nil
}

// retry is a task in progress whose completion was refused fewer than
// maxAttempts times, to try again.
func retry(tasks []listed, refused map[string]int) *listed {
	for i := range tasks {
		t := &tasks[i]
		if t.status == statusInProgress && refused[t.id] > 0 && refused[t.id] < maxAttempts {
			return t
		}
	}
	return nil
}

// work does one task (attempt 1: from pending; later attempts: again after
// a refused completion). problem is why it was left unfinished; vetoed
// says a TaskCompleted hook refused the completion.
func (s *session) work(t *listed, attempt int) (problem string, vetoed bool, err error) {
	var desc string
	if attempt == 1 {
		desc, err = s.startTask(t)
	} else {
		desc, err = s.readTask(t)
	}
	if f, ok := err.(*taskFailure); ok {
		return f.msg, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if err := s.runDirectives(desc); err != nil {
		return "", false, err
	}
	path := filepath.Join(s.workDir(), sanitizeID(t.id)+".md")
	content := fmt.Sprintf("# %s: %s\n\n", t.id, t.subject)
	if desc != "" {
		content += desc + "\n\n"
	}
	content += fmt.Sprintf("Attempt %d. Done by agentsim (script %s, session %s).\n", attempt, s.script, s.sessionID)
	res, err := s.writeFile(path, content)
	if err != nil {
		return "", false, err
	}
	if res.isError {
		return res.text, false, nil
	}
	res, err = s.call("TaskUpdate", newObj("taskId", t.id, "status", statusCompleted), s.takeLead())
	if err != nil {
		return "", false, err
	}
	problem = updateFailure(res)
	return problem, strings.HasPrefix(problem, "TaskCompleted hook feedback:"), nil
}

// workDir is where a task's file goes: <cwd>/saga-work/<story>/ in a
// story's run ($SAGA_STORY_ID), so that stories whose tasks share an id
// (an epic's "implement", "write-tests") never write the same file and a
// story with two blockers merges their branches cleanly; <cwd>/saga-work/
// outside one.
func (s *session) workDir() string {
	if story := s.getenv(runs.EnvStoryID); story != "" {
		return filepath.Join(s.cwd, "saga-work", sanitizeID(story))
	}
	return filepath.Join(s.cwd, "saga-work")
}

// writeFile writes a whole file, reading it first when it exists (Write
// refuses files the session has not read).
func (s *session) writeFile(path, content string) (toolResult, error) {
	if !s.available["Write"] {
		return toolResult{text: "the Write tool is not available", isError: true}, nil
	}
	if _, err := os.Stat(path); err == nil && !s.readFiles[path] && s.available["Read"] {
		if _, err := s.call("Read", newObj("file_path", path), s.takeLead()); err != nil {
			return toolResult{}, err
		}
	}
	return s.call("Write", newObj("file_path", path, "content", content), s.takeLead())
}

func (s *session) blocker() error {
	tasks, err := s.listTasks()
	if err != nil {
		return err
	}
	t := next(tasks, nil)
	about := "the story"
	if t != nil {
		about = fmt.Sprintf("task #%s (%s)", t.id, t.subject)
		if _, err := s.startTask(t); err != nil {
			if _, ok := err.(*taskFailure); !ok {
				return err
			}
		}
	}
	text := s.getenv("SAGA_STANDIN_BLOCKER")
	if text == "" {
		text = fmt.Sprintf("agentsim: cannot continue %s without a decision from a human.", about)
	}
	story := s.getenv(runs.EnvStoryID)
	if story == "" {
		story = s.getenv(runs.EnvStoryPath)
	}
	if story == "" {
		return s.say("I am blocked (" + text + ") but there is no story (" + runs.EnvStoryID + " is unset), so I cannot record it in a journal.")
	}
	dir := story
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cwd, ".saga", "stories", story)
	}
	journal := filepath.Join(dir, "journal.md")
	entry := fmt.Sprintf("## %s blocker\n%s\n", time.Now().UTC().Format(time.RFC3339), text)
	var res toolResult
	data, rerr := os.ReadFile(journal)
	if rerr == nil && len(data) > 0 && s.available["Read"] && s.available["Edit"] {
		if _, err := s.call("Read", newObj("file_path", journal), s.takeLead()); err != nil {
			return err
		}
		old := string(data)
		sep := ""
		if !strings.HasSuffix(old, "\n") {
			sep = "\n"
		}
		res, err = s.call("Edit", newObj("file_path", journal, "old_string", old, "new_string", old+sep+entry), s.takeLead())
	} else {
		res, err = s.writeFile(journal, entry)
	}
	if err != nil {
		return err
	}
	if res.isError {
		return s.say("I am blocked (" + text + ") and could not record it in " + journal + ": " + res.text)
	}
	return s.say("I am blocked: " + text + " I recorded the blocker in " + journal + ".")
}

func (s *session) escape() error {
	targets := []struct{ path, content string }{
		{s.cwd + "/../outside.txt", "written by agentsim's escape script\n"},
		{"/etc/saga-escape", "written by agentsim's escape script\n"},
		{filepath.Join(s.cwd, ".saga", "epics", "x.json"), "{\n  \"id\": \"x\",\n  \"title\": \"written by agentsim's escape script\"\n}\n"},
	}
	var outcomes []string
	if s.lead == "" {
		s.lead = "First I will check whether I can write outside my scope."
	}
	for _, t := range targets {
		res, err := s.call("Write", newObj("file_path", t.path, "content", t.content), s.takeLead())
		if err != nil {
			return err
		}
		if res.isError {
			outcomes = append(outcomes, fmt.Sprintf("%s: denied: %s", t.path, res.text))
		} else {
			outcomes = append(outcomes, t.path+": WRITTEN")
		}
	}
	s.lead = "Escape attempts:\n" + strings.Join(outcomes, "\n")
	summary, err := s.workLoop(false)
	if err != nil {
		return err
	}
	return s.say(summary)
}

// runDirectives carries out the `SIMAGENT <verb> <argument>` lines of a
// text (the prompt, or a task's description as TaskGet showed it):
// "bash <command>" calls Bash with the command (the rest of the line,
// verbatim), "bash-unsandboxed <command>" the same with
// dangerouslyDisableSandbox. What the model saw of each goes into
// s.report, which its final answer ends with.
func (s *session) runDirectives(text string) error {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "SIMAGENT ")
		if !ok {
			continue
		}
		verb, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
		arg = strings.TrimSpace(arg)
		if verb != "bash" && verb != "bash-unsandboxed" {
			s.report = append(s.report, fmt.Sprintf("unknown directive %q (want bash or bash-unsandboxed)", verb))
			continue
		}
		if !s.available["Bash"] {
			s.report = append(s.report, "$ "+arg+"\nnot run: the Bash tool is not available")
			continue
		}
		desc := arg
		if len(desc) > 40 {
			desc = desc[:40]
		}
		in := newObj("command", arg, "description", "Run "+desc)
		if verb == "bash-unsandboxed" {
			in.set("dangerouslyDisableSandbox", true)
		}
		res, err := s.call("Bash", in, s.takeLead())
		if err != nil {
			return err
		}
		if res.isError && strings.Contains(res.text, "bwrap: Can't find source path") {
			// The sandbox, not the command, failed: a path it binds went
			// away between its look and bwrap's mount — another agent's
			// placeholder (.git/config.lock, in the common dir every
			// worktree shares) removed as its command ended. A model
			// tries such a command again, once.
			if res, err = s.call("Bash", in, ""); err != nil {
				return err
			}
		}
		outcome := "ok"
		if res.isError {
			outcome = "failed"
		}
		s.report = append(s.report, fmt.Sprintf("$ %s\n%s: %s", arg, outcome, res.text))
	}
	return nil
}

// ---- turns and lines ----

// takeLead hands out the pending text that precedes the next tool call.
func (s *session) takeLead() string {
	l := s.lead
	s.lead = ""
	return l
}

// pause waits before a model turn (ScriptSlow), returning early when the
// run is stopped or interrupted.
func (s *session) pause() error {
	if err := s.stopped(); err != nil {
		return err
	}
	if s.delay <= 0 {
		return nil
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-s.ictx.Done():
		return s.stopped()
	case <-t.C:
		return nil
	}
}

// stopped reports a stop (SIGTERM, cancelled context) or an interrupt that
// came while the model was "thinking".
func (s *session) stopped() error {
	switch {
	case s.ctx.Err() != nil:
		return errCanceled
	case s.interrupted.Load():
		return errInterruptedModel
	}
	return nil
}

// newTurn starts an assistant message (one model response).
func (s *session) newTurn() (string, error) {
	if err := s.stopped(); err != nil {
		return "", err
	}
	if s.args.maxTurns > 0 && s.turns >= s.args.maxTurns {
		return "", errMaxTurns
	}
	s.turns++
	return newID("msg_"), nil
}

// say is a text-only answer: the model's last word in a run.
func (s *session) say(text string) error {
	if err := s.pause(); err != nil {
		return err
	}
	msgID, err := s.newTurn()
	if err != nil {
		return err
	}
	if lead := s.takeLead(); lead != "" {
		text = lead + "\n\n" + text
	}
	if len(s.report) > 0 {
		text += "\n\nBash results:\n" + strings.Join(s.report, "\n")
	}
	s.emitAssistant(msgID, newObj("type", "text", "text", text))
	s.lastText = text
	return nil
}

func (s *session) emitAssistant(msgID string, block *obj) {
	s.emit(newObj("type", "assistant", "message", newObj("id", msgID, "type", "message", "role", "assistant",
		"model", s.model, "content", []any{block}, "stop_reason", nil, "stop_sequence", nil, "usage", messageUsage(),
		"context_management", nil), "parent_tool_use_id", nil, "session_id", s.sessionID, "uuid", newUUID(),
		"timestamp", timestamp(), "request_id", newID("req_")))
}
