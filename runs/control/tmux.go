package control

// tmux, the terminal multiplexer workers and epic runners run in: one
// server's sessions, started with argument vectors (a shell string only on
// tmux < 2.0, where every word is quoted).

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Tmux runs one tmux server's commands.
type Tmux struct {
	Path         string // the tmux executable
	Socket       string // tmux -L name; "" for the default server
	major, minor int    // version; 99.0 when unknown (a development build)
}

// FindTmux finds tmux on PATH and reads its version. The socket comes from
// $SAGA_TMUX_SOCKET. The error wraps ErrNoTmux when tmux is missing.
func FindTmux(ctx context.Context, env func(string) string) (*Tmux, error) {
	p, err := runs.LookProgram(env, runs.ProgramTmux)
	if err != nil {
		return nil, ErrNoTmux
	}
	sock := runs.Getenv(env, runs.EnvTmuxSocket)
	if sock != "" && !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(sock) {
		return nil, store.Usagef("%s=%q: a tmux socket name is letters, digits, '.', '_' and '-'", runs.EnvTmuxSocket, sock)
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

// parseTmuxVersion reads `tmux -V` output: "tmux 3.3a", "tmux next-3.4",
// "tmux 2.9". Development and OpenBSD builds ("tmux master",
// "tmux openbsd-7.5") are current: ok is false and the caller assumes so.
func parseTmuxVersion(s string) (major, minor int, ok bool) {
	if strings.Contains(s, "openbsd") {
		return 0, 0, false
	}
	m := regexp.MustCompile(`(\d+)\.(\d+)`).FindStringSubmatch(s)
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
		strings.Contains(s, "No such file or directory") || lostServer(err)
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

// SessionPaths lists every session of the server with its working
// directory (the folder it was started in: run starts workers in the
// workspace root), so a session can be told to belong to one repository.
// No server: none.
func (t *Tmux) SessionPaths(ctx context.Context) (map[string]string, error) {
	out, err := t.run(ctx, "list-sessions", "-F", "#{session_name}\t#{session_path}")
	if err != nil {
		if noServer(err) {
			return nil, nil
		}
		return nil, err
	}
	paths := map[string]string{}
	for line := range strings.Lines(out) {
		name, path, _ := strings.Cut(strings.TrimRight(line, "\r\n"), "\t")
		if name != "" {
			paths[name] = path
		}
	}
	return paths, nil
}

// KindSessions lists the sessions of one story's worker or one epic's
// runner (named by runs.KindSessionName), oldest first.
func (t *Tmux) KindSessions(ctx context.Context, k runs.Kind, id string) ([]string, error) {
	all, err := t.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	return groupSessions(all, k)[id], nil
}

// StorySessions lists the story's worker sessions, oldest first.
func (t *Tmux) StorySessions(ctx context.Context, story string) ([]string, error) {
	return t.KindSessions(ctx, runs.KindStory, story)
}

// groupSessions groups the session names of kind k by story or epic, each
// list oldest first.
func groupSessions(names []string, k runs.Kind) map[string][]string {
	type sess struct {
		name string
		ms   int64
	}
	by := map[string][]sess{}
	for _, n := range names {
		if kind, id, ms, ok := runs.ParseSession(n); ok && kind == k {
			by[id] = append(by[id], sess{n, ms})
		}
	}
	out := make(map[string][]string, len(by))
	for id, ss := range by {
		slices.SortFunc(ss, func(a, b sess) int {
			return cmp.Or(cmp.Compare(a.ms, b.ms), strings.Compare(a.name, b.name))
		})
		for _, s := range ss {
			out[id] = append(out[id], s.name)
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
		n, err := strconv.Atoi(pid)
		if err == nil && n > 0 && !filesafe.ProcessAlive(n) {
			continue // gone, and tmux has not noticed yet (a SIGKILL)
		}
		alive = true
		if err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	return alive, pids
}

// KillSession ends a session; one that is already gone is not an error.
// tmux 3.3 says "no current target" for a session that ended while the
// command looked it up (seen when a stopped worker's session closed itself
// under load); the target is always explicit here, so that means gone too.
func (t *Tmux) KillSession(ctx context.Context, session string) error {
	_, err := t.run(ctx, "kill-session", "-t", t.target(session))
	if err != nil && (noServer(err) || strings.Contains(err.Error(), "can't find session") ||
		strings.Contains(err.Error(), "session not found") || strings.Contains(err.Error(), "no current target")) {
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
			words = append(words, runs.ShellQuote(w))
		}
		args = append(args, strings.Join(words, " "))
	}
	_, err := t.run(ctx, args...)
	// A server exits when its last session ends: a session asked for then
	// meets the server on its way out, and tmux says so. Nothing was made;
	// asked again, tmux starts a new server. An epic run met it when its
	// one running worker ended as it started the next
	// (TestNewSessionWhileTheServerExits).
	for try := 0; err != nil && lostServer(err) && try < 3 && ctx.Err() == nil; try++ {
		_, err = t.run(ctx, args...)
	}
	return err
}

// lostServer tells tmux's error for a server that exited while the
// command talked to it.
func lostServer(err error) bool { return strings.Contains(err.Error(), "server exited unexpectedly") }
