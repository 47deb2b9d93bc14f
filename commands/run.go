package commands

// Story workers in tmux (design.md §4): `saga-lsp run <story>` starts
// `saga-lsp worker <story>` in a detached tmux session named
// saga-story-<story>-<unixMillis>, `saga-lsp stop <story>` ends it. The
// language server's saga.runStory / saga.stopStory call the same functions.
//
// Every name is validated before it reaches tmux or a path, and tmux gets
// argument vectors: the worker's command line never goes through a shell
// (except on tmux < 2.0, where every word is single-quoted).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"golang.org/x/sys/unix"
)

// Environment variables read (or set for the worker) by run, stop, status
// and install.
const (
	// EnvSessionDir is where output and events files go (default
	// DefaultSessionDir). It is passed on to the worker.
	EnvSessionDir = "SAGA_SESSION_DIR"
	// EnvSession is set for the worker: the name of its tmux session.
	EnvSession = "SAGA_SESSION"
	// EnvBin names the saga-lsp binary that run starts in tmux and install
	// registers as the hook (default: the running executable). Tests point
	// it at a stand-in worker.
	EnvBin = "SAGA_LSP_BIN"
	// EnvTmuxSocket is a tmux socket name (tmux -L NAME); default: the
	// user's default tmux server.
	EnvTmuxSocket = "SAGA_TMUX_SOCKET"
)

const (
	// DefaultSessionDir holds output and events files when
	// $SAGA_SESSION_DIR is not set.
	DefaultSessionDir = "/tmp/saga-sessions"
	// SessionPrefix starts every story session's name.
	SessionPrefix = "saga-story-"
	// EventsSuffix follows the output file's name in the events file's.
	EventsSuffix = ".events.jsonl"
	// DefaultStartWait bounds how long StartStory waits for the worker's
	// first events.
	DefaultStartWait = 2 * time.Second
	// DefaultStopWait bounds how long StopStory waits for the worker to
	// clean up after SIGINT before it kills the tmux session.
	DefaultStopWait = 30 * time.Second
)

// forwardedEnv are passed from the caller's environment to the worker when
// set: a tmux server started earlier keeps the environment it was started
// with, so without them `SAGA_CLAUDE=… saga-lsp run` would silently run
// another claude. Secrets are never forwarded (tmux arguments are visible in
// the process list); the worker otherwise keeps tmux's environment.
var forwardedEnv = []string{"PATH", "CLAUDE_CONFIG_DIR", "SAGA_CLAUDE", "SAGA_GH"}

// ErrNoTmux is returned when tmux is not on PATH.
var ErrNoTmux = errors.New("tmux is not installed")

// ErrNotRunning is returned by StopStory when no worker and no tmux session
// of the story exist.
var ErrNotRunning = errors.New("no worker is running")

// RunningError refuses to start a second worker for a story.
type RunningError struct {
	Story   string
	Session string // the live tmux session, when known
	PID     int    // the worker's pid, when known
}

func (e *RunningError) Error() string {
	var what []string
	if e.PID > 0 {
		what = append(what, "pid "+strconv.Itoa(e.PID))
	}
	if e.Session != "" {
		what = append(what, "tmux session "+e.Session)
	}
	who := "a worker"
	if len(what) > 0 {
		who += " (" + strings.Join(what, ", ") + ")"
	}
	return fmt.Sprintf("%s is already running story %s: follow it with `saga-lsp status %s`, or stop it with `saga-lsp stop %s`",
		who, e.Story, e.Story, e.Story)
}

// StartError reports a worker that died (or failed) right after it started.
type StartError struct {
	Story, Session, OutputFile string
	Output                     string // the output file's content (its last 64 KiB)
	ExitCode                   *int   // the worker's exit code when it reported one
}

func (e *StartError) Error() string {
	how := "exited at once"
	if e.ExitCode != nil {
		how = fmt.Sprintf("exited at once with code %d", *e.ExitCode)
	}
	msg := fmt.Sprintf("the worker for story %s (tmux session %s) %s", e.Story, e.Session, how)
	if strings.TrimSpace(e.Output) == "" {
		return msg + fmt.Sprintf(" without output; run `saga-lsp worker %s` directly to see why", e.Story)
	}
	return msg + "; its output (" + e.OutputFile + ") is above"
}

// getenv looks a variable up with env (os.Getenv when nil), trimmed.
func getenv(env func(string) string, key string) string {
	if env == nil {
		env = os.Getenv
	}
	return strings.TrimSpace(env(key))
}

// SessionDir is $SAGA_SESSION_DIR (made absolute) or DefaultSessionDir.
func SessionDir(env func(string) string) string {
	d := getenv(env, EnvSessionDir)
	if d == "" {
		return DefaultSessionDir
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// SelfPath is the saga-lsp binary to run as worker and hook: $SAGA_LSP_BIN
// (a path, or a name looked up on PATH) or the running executable. The
// result is absolute.
func SelfPath(env func(string) string) (string, error) {
	if p := getenv(env, EnvBin); p != "" {
		if !strings.ContainsRune(p, '/') {
			lp, err := exec.LookPath(p)
			if err != nil {
				return "", fmt.Errorf("%s=%s: not found on PATH: set it to the saga-lsp binary's path", EnvBin, p)
			}
			p = lp
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBin, p, err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return "", fmt.Errorf("%s=%s: no such executable file: set it to the saga-lsp binary's path", EnvBin, p)
		}
		return abs, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the saga-lsp binary (%v): set %s to its path", err, EnvBin)
	}
	return p, nil
}

// SessionName is the tmux session of a story's worker started at t.
func SessionName(story string, t time.Time) string {
	return SessionPrefix + story + "-" + strconv.FormatInt(t.UnixMilli(), 10)
}

// ParseSessionName splits saga-story-<story>-<unixMillis>. Story names never
// end in a dash, so the last dash separates the timestamp unambiguously.
func ParseSessionName(name string) (story string, millis int64, ok bool) {
	rest, ok := strings.CutPrefix(name, SessionPrefix)
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", 0, false
	}
	digits := rest[i+1:]
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return "", 0, false
		}
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || !store.ValidCanonical(rest[:i]) {
		return "", 0, false
	}
	return rest[:i], ms, true
}

// OutputFile is the human log of a session; EventsFile its JSON-lines
// events.
func OutputFile(sessionDir, session string) string {
	return filepath.Join(sessionDir, session+".log")
}

// EventsFile is the events file the worker writes next to outputFile.
func EventsFile(outputFile string) string { return outputFile + EventsSuffix }

// ---------------------------------------------------------------------------
// tmux

// Tmux runs one tmux server's commands.
type Tmux struct {
	Path         string // the tmux executable
	Socket       string // tmux -L name; "" for the default server
	major, minor int    // version; 99.0 when unknown (a development build)
}

var socketName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// FindTmux finds tmux on PATH and reads its version. The socket comes from
// $SAGA_TMUX_SOCKET. The error wraps ErrNoTmux when tmux is missing.
func FindTmux(ctx context.Context, env func(string) string) (*Tmux, error) {
	p, err := exec.LookPath("tmux")
	if err != nil {
		return nil, ErrNoTmux
	}
	sock := getenv(env, EnvTmuxSocket)
	if sock != "" && !socketName.MatchString(sock) {
		return nil, usagef("%s=%q: a tmux socket name is letters, digits, '.', '_' and '-'", EnvTmuxSocket, sock)
	}
	t := &Tmux{Path: p, Socket: sock, major: 99}
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(vctx, p, "-V").Output(); err == nil {
		if ma, mi, ok := parseTmuxVersion(string(out)); ok {
			t.major, t.minor = ma, mi
		}
	}
	return t, nil
}

var tmuxVersion = regexp.MustCompile(`(\d+)\.(\d+)`)

// parseTmuxVersion reads `tmux -V` output: "tmux 3.3a", "tmux next-3.4",
// "tmux 2.9". Development and OpenBSD builds ("tmux master",
// "tmux openbsd-7.5") are current: ok is false and the caller assumes so.
func parseTmuxVersion(s string) (major, minor int, ok bool) {
	if strings.Contains(s, "openbsd") {
		return 0, 0, false
	}
	m := tmuxVersion.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

func (t *Tmux) atLeast(major, minor int) bool {
	return t.major > major || (t.major == major && t.minor >= minor)
}

// Version is the tmux version as read from `tmux -V` (99.0 when unknown).
func (t *Tmux) Version() string { return fmt.Sprintf("%d.%d", t.major, t.minor) }

// target names a session exactly ("=name"; tmux ≥ 2.1), not as a prefix.
func (t *Tmux) target(session string) string {
	if t.atLeast(2, 1) {
		return "=" + session
	}
	return session
}

func (t *Tmux) run(ctx context.Context, args ...string) (string, error) {
	sub := args[0]
	if t.Socket != "" {
		args = append([]string{"-L", t.Socket}, args...)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, t.Path, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return string(out), fmt.Errorf("tmux %s: %s", sub, msg)
	}
	return string(out), nil
}

// noServer tells the errors of a tmux without a running server, including
// one that exits while we ask (its last session just ended).
func noServer(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no server running") || strings.Contains(s, "error connecting to") ||
		strings.Contains(s, "No such file or directory") || strings.Contains(s, "server exited unexpectedly")
}

// Sessions lists every session of the server (none when no server runs).
func (t *Tmux) Sessions(ctx context.Context) ([]string, error) {
	out, err := t.run(ctx, "list-sessions", "-F", "#{session_name}")
	if err != nil {
		if noServer(err) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for line := range strings.Lines(out) {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names, nil
}

// StorySessions lists the story's sessions (saga-story-<story>-<ms>),
// oldest first.
func (t *Tmux) StorySessions(ctx context.Context, story string) ([]string, error) {
	all, err := t.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	return storySessions(all)[story], nil
}

// storySessions groups session names by story, each list oldest first.
func storySessions(names []string) map[string][]string {
	type sess struct {
		name string
		ms   int64
	}
	by := map[string][]sess{}
	for _, n := range names {
		if story, ms, ok := ParseSessionName(n); ok {
			by[story] = append(by[story], sess{n, ms})
		}
	}
	out := make(map[string][]string, len(by))
	for story, ss := range by {
		slices.SortFunc(ss, func(a, b sess) int {
			if a.ms != b.ms {
				return int(a.ms - b.ms)
			}
			return strings.Compare(a.name, b.name)
		})
		for _, s := range ss {
			out[story] = append(out[story], s.name)
		}
	}
	return out
}

// Panes reports whether the session exists with a live pane, and the pids
// of its live panes' processes.
func (t *Tmux) Panes(ctx context.Context, session string) (alive bool, pids []int) {
	out, err := t.run(ctx, "list-panes", "-s", "-t", t.target(session), "-F", "#{pane_dead} #{pane_pid}")
	if err != nil {
		return false, nil
	}
	for line := range strings.Lines(out) {
		dead, pid, _ := strings.Cut(strings.TrimSpace(line), " ")
		if dead == "1" {
			continue
		}
		alive = true
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return alive, pids
}

// HasSession reports whether the session exists (live or with dead panes).
func (t *Tmux) HasSession(ctx context.Context, session string) bool {
	_, err := t.run(ctx, "has-session", "-t", t.target(session))
	return err == nil
}

// KillSession ends a session; one that is already gone is not an error.
func (t *Tmux) KillSession(ctx context.Context, session string) error {
	_, err := t.run(ctx, "kill-session", "-t", t.target(session))
	if err != nil && (noServer(err) || strings.Contains(err.Error(), "can't find session") ||
		strings.Contains(err.Error(), "session not found")) {
		return nil
	}
	return err
}

// AttachCommand is the command line a user types to watch a session.
func (t *Tmux) AttachCommand(session string) string {
	if t.Socket != "" {
		return "tmux -L " + t.Socket + " attach -t " + session
	}
	return "tmux attach -t " + session
}

// NewSession starts argv detached in a new session with working directory
// dir and the variables env (KEY=value) added to its environment. tmux ≥ 3.2
// gets `-e KEY=value … -- argv…`; 2.0–3.1 (no new-session -e) run
// `env KEY=value … argv…`; older versions only take a shell command, so
// every word is single-quoted.
func (t *Tmux) NewSession(ctx context.Context, session, dir string, env, argv []string) error {
	args := []string{"new-session", "-d", "-s", session, "-c", dir}
	switch {
	case t.atLeast(3, 2):
		for _, kv := range env {
			args = append(args, "-e", kv)
		}
		args = append(args, "--")
		args = append(args, argv...)
	case t.atLeast(2, 0):
		if strings.Contains(argv[0], "=") {
			return fmt.Errorf("tmux %s cannot start %s (a '=' in the path): install tmux ≥ 3.2 or move the binary", t.Version(), argv[0])
		}
		args = append(args, "--", "env")
		args = append(args, env...)
		args = append(args, argv...)
	default:
		if strings.Contains(argv[0], "=") {
			return fmt.Errorf("tmux %s cannot start %s (a '=' in the path): install tmux ≥ 3.2 or move the binary", t.Version(), argv[0])
		}
		words := []string{"exec", "env"}
		for _, w := range append(slices.Clone(env), argv...) {
			words = append(words, ShellQuote(w))
		}
		args = append(args, strings.Join(words, " "))
	}
	_, err := t.run(ctx, args...)
	return err
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellQuote returns s as one POSIX shell word: unchanged when it holds only
// safe characters, else single-quoted (an embedded quote is closed,
// escaped with a backslash and reopened).
func ShellQuote(s string) string {
	if s != "" && shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ---------------------------------------------------------------------------
// run

// WorkerFlags are the worker options `run` passes on; zero values are left
// to the worker's defaults.
type WorkerFlags struct {
	MaxCycles      int    // --max-cycles
	MaxTime        int    // --max-time, minutes
	Model          string // --model
	PermissionMode string // --permission-mode
	Base           string // --base
	KeepTasks      bool   // --keep-tasks
	DryRun         bool   // --dry-run
}

// Args validates the flags and returns them as worker arguments.
func (f WorkerFlags) Args() ([]string, error) {
	var args []string
	if f.MaxCycles < 0 || f.MaxTime < 0 {
		return nil, usagef("--max-cycles and --max-time must be positive")
	}
	if f.MaxCycles > 0 {
		args = append(args, "--max-cycles", strconv.Itoa(f.MaxCycles))
	}
	if f.MaxTime > 0 {
		args = append(args, "--max-time", strconv.Itoa(f.MaxTime))
	}
	for _, kv := range [][2]string{{"model", f.Model}, {"permission-mode", f.PermissionMode}, {"base", f.Base}} {
		if kv[1] == "" {
			continue
		}
		if strings.HasPrefix(kv[1], "-") || strings.ContainsFunc(kv[1], func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
			return nil, usagef("invalid --%s %q: no leading dash, spaces or control characters", kv[0], kv[1])
		}
		args = append(args, "--"+kv[0], kv[1])
	}
	if f.KeepTasks {
		args = append(args, "--keep-tasks")
	}
	if f.DryRun {
		args = append(args, "--dry-run")
	}
	return args, nil
}

// RunOptions configure StartStory.
type RunOptions struct {
	Root   string // workspace root (holds .saga/)
	Story  string
	Worker WorkerFlags

	SessionDir string              // default SessionDir(Env)
	Self       string              // default SelfPath(Env)
	Tmux       *Tmux               // default FindTmux(Env)
	Env        func(string) string // default os.Getenv
	Now        func() time.Time    // default time.Now
	Wait       time.Duration       // default DefaultStartWait
}

// Started describes a worker started in tmux.
type Started struct {
	Story      string `json:"story"`
	Session    string `json:"session"`
	OutputFile string `json:"outputFile"`
	EventsFile string `json:"eventsFile"`
	PID        int    `json:"pid"` // from the worker.start event; 0 when it had not reported yet
	// Attach is the command to watch the session (not in JSON: tools get
	// the session name).
	Attach string `json:"-"`
	// Finished is set when the worker completed (exit 0) while run waited.
	Finished bool `json:"-"`
}

// StartStory starts `<self> worker <story> --output-file <file> --session
// <name>` in a detached tmux session, after checking that the name is valid,
// the story exists, and no worker or session of the story is alive. It then
// waits (at most o.Wait) for the worker's first events, and fails with a
// *StartError when the worker died at once. Errors: *UsageError (name,
// story), ErrNoTmux, *RunningError, *StartError, or I/O.
func StartStory(ctx context.Context, o RunOptions) (*Started, error) {
	if !store.ValidCanonical(o.Story) {
		return nil, usagef("invalid story name %q: use lowercase ids of letters, digits and single dashes, joined by \"--\" (e.g. %s)", o.Story, exampleName(o.Story, true))
	}
	if err := storyExists(o.Root, o.Story); err != nil {
		return nil, err
	}
	wargs, err := o.Worker.Args()
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Wait <= 0 {
		o.Wait = DefaultStartWait
	}
	if o.Tmux == nil {
		if o.Tmux, err = FindTmux(ctx, o.Env); err != nil {
			if errors.Is(err, ErrNoTmux) {
				return nil, fmt.Errorf("%w: apt-get install tmux, or run `saga-lsp worker %s` directly", ErrNoTmux, o.Story)
			}
			return nil, err
		}
	}
	if o.Self == "" {
		if o.Self, err = SelfPath(o.Env); err != nil {
			return nil, err
		}
	}
	if o.SessionDir == "" {
		o.SessionDir = SessionDir(o.Env)
	}

	// One worker per story: the lock a live worker holds, and any live
	// session (a worker that has not taken the lock yet). Sessions whose
	// worker has exited (kept by remain-on-exit) are removed.
	all, err := o.Tmux.StorySessions(ctx, o.Story)
	if err != nil {
		return nil, err
	}
	var sessions []string
	for _, s := range all {
		if alive, _ := o.Tmux.Panes(ctx, s); alive {
			sessions = append(sessions, s)
		} else if err := o.Tmux.KillSession(ctx, s); err != nil { // kept by remain-on-exit
			return nil, err
		}
	}
	pid, held, err := workerLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	if held || len(sessions) > 0 {
		e := &RunningError{Story: o.Story, PID: pid}
		if len(sessions) > 0 {
			e.Session = sessions[len(sessions)-1]
		}
		return nil, e
	}

	if err := os.MkdirAll(o.SessionDir, 0o755); err != nil {
		return nil, fmt.Errorf("create the session folder %s: %w (set %s to a writable folder)", o.SessionDir, err, EnvSessionDir)
	}
	session := SessionName(o.Story, o.Now())
	out := OutputFile(o.SessionDir, session)
	st := &Started{Story: o.Story, Session: session, OutputFile: out, EventsFile: EventsFile(out),
		Attach: o.Tmux.AttachCommand(session)}
	argv := append([]string{o.Self, "worker", o.Story, "--output-file", out, "--session", session}, wargs...)
	env := []string{EnvSessionDir + "=" + o.SessionDir, EnvSession + "=" + session}
	for _, k := range forwardedEnv {
		if v := getenv(o.Env, k); v != "" && !strings.ContainsAny(v, "\n\x00") {
			env = append(env, k+"="+v)
		}
	}
	if err := o.Tmux.NewSession(ctx, session, o.Root, env, argv); err != nil {
		return nil, fmt.Errorf("start tmux session %s: %w", session, err)
	}
	return st, waitStarted(ctx, o.Tmux, st, o.Wait)
}

// storyExists checks that the story's folder and story.json are there.
func storyExists(root, story string) error {
	rel := store.StoryFileRel(story)
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if err == nil && fi.Mode().IsRegular() {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	return usagef("no story %q in %s: %s does not exist (`saga-lsp status` lists the stories; `saga-lsp new story %s --title …` creates it)",
		story, root, rel, story)
}

// waitStarted polls the events file until the worker holds its lock (or
// got past it), ends, or its session dies; at most wait. A worker that has
// not reported by then is taken as starting slowly.
func waitStarted(ctx context.Context, t *Tmux, st *Started, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		sum := readEvents(st.EventsFile)
		if sum != nil {
			st.PID = sum.PID
			if sum.Ended {
				if sum.ExitCode != nil && *sum.ExitCode == 0 {
					st.Finished = true
					return nil
				}
				return startError(st, sum.ExitCode)
			}
			if sum.Locked {
				return nil
			}
		}
		if alive, _ := t.Panes(ctx, st.Session); !alive {
			// Read once more: the worker may have written its end just
			// before the session closed.
			if sum = readEvents(st.EventsFile); sum != nil && sum.Ended && sum.ExitCode != nil && *sum.ExitCode == 0 {
				st.Finished = true
				return nil
			}
			var code *int
			if sum != nil {
				code = sum.ExitCode
			}
			// A session kept after its pane died (remain-on-exit) goes too.
			_ = t.KillSession(context.WithoutCancel(ctx), st.Session)
			return startError(st, code)
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func startError(st *Started, code *int) error {
	return &StartError{Story: st.Story, Session: st.Session, OutputFile: st.OutputFile,
		Output: tail(st.OutputFile, 64<<10), ExitCode: code}
}

// tail reads at most the last n bytes of a file ("" when unreadable).
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		if _, err := f.Seek(fi.Size()-n, io.SeekStart); err != nil {
			return ""
		}
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return string(b)
}

// lockFile is the worker lock's file, for messages.
func lockFile(root, story string) string {
	dir, err := store.LockDir(root)
	if err != nil {
		return workerLockName(story) + ".lock"
	}
	return filepath.Join(dir, workerLockName(story)+".lock")
}

// workerLockName is the flock a live worker holds for its story.
func workerLockName(story string) string { return "worker-" + story }

// workerLock reports whether the story's worker lock is held, and the
// holder's pid when recorded. Non-strict, a lock without a recorded holder
// counts as free without being probed, so reading the state never makes a
// worker that starts at that moment fail its own TryLock; strict (before
// starting a worker) always probes with TryLock.
func workerLock(root, story string, strict bool) (pid int, held bool, err error) {
	name := workerLockName(story)
	pid, err = store.LockHolder(root, name)
	if err != nil {
		return 0, false, err
	}
	if pid == 0 && !strict {
		return 0, false, nil
	}
	l, ok, err := store.TryLock(root, name)
	if err != nil {
		return 0, false, err
	}
	if ok {
		// Free: the recorded pid (if any) was a dead holder's; Unlock
		// clears it.
		_ = l.Unlock()
		return 0, false, nil
	}
	if pid == 0 {
		pid, _ = store.LockHolder(root, name)
	}
	return pid, true, nil
}

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	// A zombie answers kill(0) until its parent reaps it.
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// looksLikeWorker checks, where /proc exists, that pid runs a worker for the
// story, so a pid read from an old events file and reused since is never
// signalled.
func looksLikeWorker(pid int, story string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, statErr := os.Stat("/proc/self/cmdline")
		return statErr != nil // no /proc: cannot tell, trust the events file
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return slices.Contains(args, story) && (slices.Contains(args, "worker") || slices.Contains(args, "--worker"))
}

// ---------------------------------------------------------------------------
// stop

// StopOptions configure StopStory.
type StopOptions struct {
	Root       string
	Story      string
	SessionDir string              // default SessionDir(Env)
	Tmux       *Tmux               // default FindTmux(Env); without tmux only the process is signalled
	Env        func(string) string // default os.Getenv
	Wait       time.Duration       // default DefaultStopWait
}

// Stopped reports what StopStory ended.
type Stopped struct {
	Story      string   `json:"story"`
	Stopped    bool     `json:"stopped"`
	PID        int      `json:"pid"`        // the worker signalled (0 when only sessions were killed)
	Sessions   []string `json:"sessions"`   // tmux sessions of the story that were killed
	State      string   `json:"state"`      // the worker's final status (worker.end), or "" when unknown
	ExitCode   *int     `json:"exitCode"`   // the worker's exit code (worker.end)
	OutputFile string   `json:"outputFile"` // the stopped worker's output file, when known
	Forced     bool     `json:"forced"`     // the worker did not end within the wait: its session was killed
}

// StopStory sends SIGINT to the story's worker (found by its lock, the
// newest events file, or its tmux session's pane), waits up to o.Wait for it
// to clean up and exit, then kills the story's tmux sessions that are still
// there. It returns ErrNotRunning (wrapped) when there was nothing to stop.
func StopStory(ctx context.Context, o StopOptions) (*Stopped, error) {
	if !store.ValidCanonical(o.Story) {
		return nil, usagef("invalid story name %q", o.Story)
	}
	if o.Wait <= 0 {
		o.Wait = DefaultStopWait
	}
	if o.SessionDir == "" {
		o.SessionDir = SessionDir(o.Env)
	}
	if o.Tmux == nil {
		t, err := FindTmux(ctx, o.Env)
		if err != nil && !errors.Is(err, ErrNoTmux) {
			return nil, err
		}
		o.Tmux = t
	}
	res := &Stopped{Story: o.Story, Sessions: []string{}}

	var sessions []string
	if o.Tmux != nil {
		var err error
		if sessions, err = o.Tmux.StorySessions(ctx, o.Story); err != nil {
			return nil, err
		}
	}
	// Who to signal: the lock holder, else the newest run's pid when it
	// still runs a worker for the story, plus the sessions' pane processes.
	var targets []int
	lockPID, held, err := workerLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	latest := latestRun(o.SessionDir, o.Story)
	if held && lockPID > 0 {
		targets = append(targets, lockPID)
	} else if latest != nil && !latest.Ended && processAlive(latest.PID) && looksLikeWorker(latest.PID, o.Story) {
		targets = append(targets, latest.PID)
	}
	for _, s := range sessions {
		if _, pids := o.Tmux.Panes(ctx, s); len(pids) > 0 {
			for _, p := range pids {
				if !slices.Contains(targets, p) {
					targets = append(targets, p)
				}
			}
		}
	}
	if len(targets) == 0 && len(sessions) == 0 && !held {
		return res, fmt.Errorf("%w for story %s: no worker holds its lock and no tmux session %s%s-* exists",
			ErrNotRunning, o.Story, SessionPrefix, o.Story)
	}
	if len(targets) == 0 && len(sessions) == 0 {
		return res, fmt.Errorf("the worker lock of story %s is held by a process that did not record its pid: find it with `fuser %s`",
			o.Story, lockFile(o.Root, o.Story))
	}
	if len(targets) > 0 {
		res.PID = targets[0]
	}
	for _, p := range targets {
		_ = unix.Kill(p, unix.SIGINT)
	}

	// Wait for the cleanup: the lock released and the processes gone.
	done := func() bool {
		for _, p := range targets {
			if processAlive(p) {
				return false
			}
		}
		_, held, err := workerLock(o.Root, o.Story, false)
		return err == nil && !held
	}
	deadline := time.Now().Add(o.Wait)
	for !done() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !done() {
		res.Forced = true
	}

	// Sessions still there: a worker that did not stop in time (killing
	// the session hangs it up), a dead pane kept by remain-on-exit, or a
	// session that never got as far as a worker.
	if o.Tmux != nil {
		left, err := o.Tmux.StorySessions(ctx, o.Story)
		if err != nil {
			return res, err
		}
		for _, s := range left {
			if err := o.Tmux.KillSession(ctx, s); err != nil {
				return res, err
			}
			res.Sessions = append(res.Sessions, s)
		}
	}
	if res.Forced {
		end := time.Now().Add(3 * time.Second)
		for !done() && time.Now().Before(end) {
			time.Sleep(50 * time.Millisecond)
		}
		if !done() {
			return res, fmt.Errorf("the worker for story %s (pid %d) did not stop within %s of SIGINT: end it with `kill %d`",
				o.Story, res.PID, o.Wait, res.PID)
		}
	}
	res.Stopped = true

	// The final status from the stopped worker's events file.
	if run := runOf(o.SessionDir, o.Story, res.PID); run != nil {
		res.OutputFile = run.OutputFile
		if run.Ended {
			res.State, res.ExitCode = run.Status, run.ExitCode
		}
	}
	return res, nil
}
