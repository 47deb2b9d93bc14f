package agentsim

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// Version is the Claude Code version the simulation follows.
const Version = "2.1.330"

// Exit codes of Run besides 0 and 1.
const (
	// ExitUsage is returned for command-line errors (unknown flags, missing
	// values, bad choices) and for things the simulation does not do.
	ExitUsage = 2
	// ExitCanceled is returned when the context is cancelled mid-run (the
	// in-process counterpart of the process being killed by SIGTERM); no
	// result line is written.
	ExitCanceled = 143
)

// Options configure one simulated run.
type Options struct {
	// Args is claude's argv without the program name.
	Args []string
	// Getenv looks up the simulated process's environment. Nil: look up
	// Environ.
	Getenv func(string) string
	// Environ is the full environment hooks inherit (KEY=value). Nil:
	// os.Environ().
	Environ []string
	// Dir is the working directory (the project dir). Empty: os.Getwd().
	// Symlinks are resolved, as a Node process's cwd is.
	Dir string
	// Stdin supplies the prompt when no prompt argument is given.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Script is the simulated model's behaviour; "" is ScriptAll.
	Script Script
	// Interrupt, when closed, interrupts the run as SIGINT interrupts
	// `claude -p`: the running tool and its hooks are killed, the stream
	// ends with "[Request interrupted by user…]" and an error_during_execution
	// result, SessionEnd hooks run, and the exit code is 0. Nil: never.
	Interrupt <-chan struct{}
}

// Main runs one simulated headless claude in the current process's working
// directory with os.Environ() as the environment hooks inherit, and returns
// the exit code. env is used for every variable lookup. As the real CLI,
// it ends a run interrupted by SIGINT with exit 0 (see Options.Interrupt) and
// stops at once with exit 143 on SIGTERM.
func Main(args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer, script Script) int {
	ctx, stop := signal.NotifyContext(context.Background(), supervise.TerminateSignal())
	defer stop()
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	interrupt := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigint:
			close(interrupt)
		case <-done:
		}
	}()
	return Run(ctx, Options{
		Args: args, Getenv: env, Stdin: stdin, Stdout: stdout, Stderr: stderr, Script: script, Interrupt: interrupt,
	})
}

// session is one simulated run.
type session struct {
	ctx context.Context
	// ictx is ctx, also cancelled by an interrupt: tools, hooks and the
	// model's pauses run under it (SessionEnd hooks under ctx).
	ictx        context.Context
	interrupted atomic.Bool
	getenv      func(string) string
	environ     []string
	stdout      io.Writer
	stderr      io.Writer
	script      Script
	args        *cliArgs

	cwd            string
	configDir      string
	sessionID      string
	listID         string
	store          *taskStore
	model          string
	permMode       string
	defaultMode    string
	bare           bool
	transcriptPath string
	promptID       string // the one prompt's ID, in hook payloads
	workDirs       []string
	delay          time.Duration

	hooks         map[string][]hookGroup
	hooksDisabled bool
	plugins       []any
	allowRules    []string
	denyRules     []string
	available     map[string]bool // tools offered to the model
	taskTools     bool            // TaskList and TaskUpdate offered
	deferred      map[string]bool // offered tools the model must load with ToolSearch first (not loaded yet)
	deferredCount int             // the tools deferred at the start
	sources       map[string]bool // the settings files loaded: user, project, local
	sandbox       *sandboxConfig
	mcp           []any // system/init's mcp_servers

	outMu     sync.Mutex
	start     time.Time
	turns     int
	readFiles map[string]bool
	denials   []any
	lastText  string
	lead      string   // text the model says before its next tool call
	context   []string // SessionStart / UserPromptSubmit context
	report    []string // what the model saw of its SIMAGENT commands
	envFile   string

	stopInterrupts func()
}

// watchInterrupt makes ictx end when interrupt is closed.
func (s *session) watchInterrupt(interrupt <-chan struct{}) {
	ictx, cancel := context.WithCancel(s.ctx)
	s.ictx = ictx
	s.stopInterrupts = cancel
	if interrupt == nil {
		return
	}
	go func() {
		select {
		case <-interrupt:
			s.interrupted.Store(true)
			cancel()
		case <-ictx.Done():
		}
	}()
}

var (
	errCrash            = errors.New("simulated crash")
	errMaxTurns         = errors.New("max turns reached")
	errCanceled         = errors.New("canceled")
	errInterruptedTool  = errors.New("interrupted while a tool ran")
	errInterruptedModel = errors.New("interrupted while waiting for the model")
)

// Run simulates one headless Claude Code run and returns its exit code.
func Run(ctx context.Context, o Options) int {
	s, code := prepare(ctx, o)
	if s == nil {
		return code
	}
	defer func() {
		if s.envFile != "" {
			os.Remove(s.envFile)
		}
	}()
	s.watchInterrupt(o.Interrupt)
	defer s.stopInterrupts()
	return s.run()
}

// prepare parses the command line and sets the session up. A nil session
// comes with the exit code to end with.
func prepare(ctx context.Context, o Options) (*session, int) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := &session{ctx: ctx, ictx: ctx, stdout: o.Stdout, stderr: o.Stderr, script: o.Script, start: time.Now(),
		hooks: map[string][]hookGroup{}, readFiles: map[string]bool{}}
	if s.stdout == nil {
		s.stdout = io.Discard
	}
	if s.stderr == nil {
		s.stderr = io.Discard
	}
	s.environ = o.Environ
	if s.environ == nil {
		s.environ = os.Environ()
	}
	s.getenv = o.Getenv
	if s.getenv == nil {
		s.getenv = lookupIn(s.environ)
	}

	a, err := parseArgs(o.Args)
	if err != nil {
		fmt.Fprintln(s.stderr, err)
		return nil, ExitUsage
	}
	s.args = a
	switch {
	case a.help:
		fmt.Fprint(s.stdout, usageText)
		return nil, 0
	case a.version:
		fmt.Fprintf(s.stdout, "%s (Claude Code)\n", Version)
		return nil, 0
	case !a.print:
		fmt.Fprintln(s.stderr, "agentsim: only headless runs (-p/--print) are simulated")
		return nil, ExitUsage
	case a.resume || a.cont:
		fmt.Fprintln(s.stderr, "agentsim: --resume/--continue are not simulated")
		return nil, ExitUsage
	case a.inputFormat == "stream-json":
		fmt.Fprintln(s.stderr, "agentsim: --input-format stream-json is not simulated")
		return nil, ExitUsage
	}
	if s.script == "" {
		s.script = ScriptAll
	}
	if !s.script.valid() {
		fmt.Fprintf(s.stderr, "agentsim: unknown script %q (want one of %s)\n", string(s.script), strings.Join(scriptNames(), ", "))
		return nil, ExitUsage
	}
	if a.outputFormat == "stream-json" && !a.verbose {
		fmt.Fprintln(s.stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return nil, 1
	}
	if !a.havePrompt && o.Stdin != nil && !isTerminal(o.Stdin) {
		data, _ := io.ReadAll(o.Stdin)
		a.prompt = strings.TrimSpace(string(data))
	}
	if strings.TrimSpace(a.prompt) == "" {
		fmt.Fprintln(s.stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return nil, 1
	}
	if a.sessionID != "" && !regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`).MatchString(a.sessionID) {
		fmt.Fprintln(s.stderr, "Error: Invalid session ID. Must be a valid UUID.")
		return nil, 1
	}
	if code := s.setup(o.Dir); code >= 0 {
		return nil, code
	}
	return s, -1
}

// isTerminal reports whether r is a character device (a terminal), which
// claude does not read a prompt from.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func lookupIn(environ []string) func(string) string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// setup resolves the directories, IDs, settings and tools. It returns an
// exit code, or -1 to go on.
func (s *session) setup(dir string) int {
	a := s.args
	var err error
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			fmt.Fprintln(s.stderr, "Error:", err)
			return 1
		}
	}
	if dir, err = filepath.Abs(dir); err == nil {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	s.cwd = dir
	s.workDirs = []string{s.cwd}
	for _, d := range a.addDirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.cwd, d)
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		s.workDirs = append(s.workDirs, filepath.Clean(d))
	}

	s.configDir = s.getenv("CLAUDE_CONFIG_DIR")
	if s.configDir == "" {
		home := s.getenv("HOME")
		if home == "" {
			fmt.Fprintln(s.stderr, "Error: cannot find the Claude config directory: set CLAUDE_CONFIG_DIR or HOME")
			return 1
		}
		s.configDir = filepath.Join(home, ".claude")
	}
	s.sessionID = strings.ToLower(a.sessionID)
	if s.sessionID == "" {
		s.sessionID = newUUID()
	}
	s.listID = s.getenv("CLAUDE_CODE_TASK_LIST_ID")
	if s.listID == "" {
		s.listID = s.sessionID
	}
	s.store = &taskStore{dir: filepath.Join(s.configDir, "tasks", sanitizeID(s.listID))}
	s.promptID = newUUID()
	s.transcriptPath = filepath.Join(s.configDir, "projects", sanitizePath(s.cwd), s.sessionID+".jsonl")
	s.model = resolveModel(a.model)
	s.bare = a.bare || s.script == ScriptNoHooks
	if s.script == ScriptSlow {
		s.delay = 200 * time.Millisecond
		if v := s.getenv("SAGA_STANDIN_DELAY_MS"); v != "" {
			if ms, err := strconv.Atoi(v); err == nil && ms >= 0 {
				s.delay = time.Duration(ms) * time.Millisecond
			}
		}
	}

	if err := s.loadSettings(); err != nil {
		fmt.Fprintln(s.stderr, err)
		return 1
	}
	s.permMode = "default"
	if s.defaultMode != "" {
		s.permMode = s.defaultMode
	}
	if a.permissionMode != "" {
		s.permMode = a.permissionMode
	}
	if a.skipPermissions {
		s.permMode = "bypassPermissions"
	}
	s.decideTools()
	if s.mcp, err = s.mcpServers(); err != nil {
		fmt.Fprintln(s.stderr, err)
		return 1
	}
	return -1
}

// sanitizePath is how Claude Code names a project's transcript folder.
func sanitizePath(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// run is the session proper, after setup.
func (s *session) run() int {
	// SessionStart (source "startup"), with CLAUDE_ENV_FILE.
	if f, err := os.CreateTemp("", "claude-env-*.sh"); err == nil {
		s.envFile = f.Name()
		f.Close()
	}
	s.sessionStart()
	s.emit(newObj("type", "system", "subtype", "init", "cwd", s.cwd, "session_id", s.sessionID,
		"tools", s.toolList(), "mcp_servers", s.mcp, "model", s.model, "permissionMode", s.permMode,
		"slash_commands", []any{}, "apiKeySource", "none", "claude_code_version", Version,
		"output_style", "default", "agents", []any{}, "skills", []any{}, "plugins", nonNilAny(s.plugins),
		"uuid", newUUID()))

	p := s.basePayload("UserPromptSubmit")
	p.set("prompt", s.args.prompt)
	for _, r := range s.runHooks("UserPromptSubmit", "", p) {
		if o, _ := r.output("UserPromptSubmit"); o != nil {
			if h := specific(o); h != nil && h.str("additionalContext") != "" {
				s.context = append(s.context, h.str("additionalContext"))
			}
		} else if r.exitCode == 0 && strings.TrimSpace(r.stdout) != "" {
			s.context = append(s.context, strings.TrimSpace(r.stdout))
		}
	}

	err := s.runScript()
	switch {
	case errors.Is(err, errCrash):
		return 1
	case errors.Is(err, errCanceled) || s.ctx.Err() != nil:
		return ExitCanceled
	}
	e := endingOf(err)
	switch e {
	case endInterruptedModel:
		s.emitUserText("[Request interrupted by user]")
	case endInterruptedTool:
		s.emitUserText("[Request interrupted by user for tool use]")
	}

	if err == nil {
		sp := s.basePayload("Stop")
		sp.set("stop_hook_active", false)
		sp.set("last_assistant_message", s.lastText)
		sp.set("background_tasks", []any{})
		sp.set("session_crons", []any{})
		s.hookMessages("Stop", "Stop", s.runHooks("Stop", "", sp))
	}
	s.writeResult(e)

	ep := s.basePayload("SessionEnd")
	ep.set("reason", "other")
	s.runHooks("SessionEnd", "other", ep)
	if e == endMaxTurns {
		return 1
	}
	return 0
}

// sessionStart runs the SessionStart hooks and keeps their context.
func (s *session) sessionStart() {
	p := s.basePayload("SessionStart")
	p.set("source", "startup")
	var extra []string
	if s.envFile != "" {
		extra = append(extra, "CLAUDE_ENV_FILE="+s.envFile)
	}
	runs := s.runHooks("SessionStart", "startup", p, extra...)
	s.hookMessages("SessionStart:startup", "SessionStart", runs)
	for _, r := range runs {
		o, rejected := r.output("SessionStart")
		switch {
		case o != nil:
			if h := specific(o); h != nil && h.str("additionalContext") != "" {
				s.context = append(s.context, h.str("additionalContext"))
			}
		case !rejected && r.exitCode == 0 && strings.TrimSpace(r.stdout) != "":
			s.context = append(s.context, strings.TrimSpace(r.stdout))
		}
	}
}

// hookMessages writes the hook_started / hook_response system lines that
// stream-json shows for SessionStart and Stop hooks.
func (s *session) hookMessages(name, event string, runs []*hookRun) {
	for _, r := range runs {
		id := newUUID()
		s.emit(newObj("type", "system", "subtype", "hook_started", "hook_id", id, "hook_name", name,
			"hook_event", event, "uuid", newUUID(), "session_id", s.sessionID))
		outcome := "success"
		switch {
		case r.timedOut || r.err != nil:
			outcome = "cancelled"
		case r.exitCode == 2:
			outcome = "blocking"
		case r.exitCode != 0:
			outcome = "error"
		}
		s.emit(newObj("type", "system", "subtype", "hook_response", "hook_id", id, "hook_name", name,
			"hook_event", event, "output", r.stdout+r.stderr, "stdout", r.stdout, "stderr", r.stderr,
			"exit_code", r.exitCode, "outcome", outcome, "uuid", newUUID(), "session_id", s.sessionID))
	}
}

// emitUserText is a user line with one text block (the interrupt notes).
func (s *session) emitUserText(text string) {
	s.emit(newObj("type", "user", "message", newObj("role", "user", "content", []any{newObj("type", "text", "text", text)}),
		"parent_tool_use_id", nil, "session_id", s.sessionID, "uuid", newUUID(), "timestamp", timestamp()))
}

func timestamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// emit writes one stream-json line (only in stream-json mode).
func (s *session) emit(o *obj) {
	if s.args.outputFormat != "stream-json" {
		return
	}
	s.writeLine(stringify(o, ""))
}

func (s *session) writeLine(line string) { s.write(line + "\n") }

func (s *session) write(text string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	io.WriteString(s.stdout, text)
}

// messageUsage is an assistant message's usage (no model, no tokens).
func messageUsage() *obj {
	return newObj("input_tokens", 0, "output_tokens", 0, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0)
}

func nonNilAny(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newID is an Anthropic-style id: prefix + "01" + 22 base62 characters.
func newID(prefix string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b [22]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + "01" + string(b[:])
}
