package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// ---- helpers shared by the hook tests ----

// hookResult is what one in-process Hook call produced.
type hookResult struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runHookIn calls Hook with the payload on stdin and env as the whole
// environment.
func runHookIn(t testing.TB, payload string, env map[string]string) hookResult {
	t.Helper()
	return runHookReader(t, strings.NewReader(payload), env)
}

func runHookReader(t testing.TB, in io.Reader, env map[string]string) hookResult {
	t.Helper()
	return runHookLimits(t, in, env, defaultLimits())
}

// runHookLimits is runHookReader with other limits than the hook's own.
func runHookLimits(t testing.TB, in io.Reader, env map[string]string, l limits) hookResult {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), in, hookEnv(env), &out, &errb, l, nil)
	return hookResult{out.String(), errb.String(), code, time.Since(start)}
}

func hookEnv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// hookFixture reads a file of testdata/hook.
func hookFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hookPayloadFrom takes a fixture payload and replaces top-level members, so
// the tests keep Claude Code's exact shapes.
func hookPayloadFrom(t testing.TB, name string, set map[string]any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(hookFixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// hookBaseDir returns a fresh test directory, symlinks resolved so that paths
// compare equal to what the hook resolves.
func hookBaseDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// hookNarrowTemp makes the scope check allow only scratch as the temp dir.
func hookNarrowTemp(t *testing.T, scratch string) {
	t.Helper()
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", scratch) // the hook's temp dir is the OS temp dir
}

func hookWriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hookCopyStory copies testdata/story into <root>/.saga/stories/<story>/.
func hookCopyStory(t testing.TB, root, story string) string {
	t.Helper()
	dir := filepath.Join(root, ".saga", "stories", story)
	des, err := os.ReadDir(filepath.Join("testdata", "story"))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		b := hookFixture(t, filepath.Join("story", de.Name()))
		if de.Name() == "story.json" {
			b = bytes.ReplaceAll(b, []byte(`"my-story"`), []byte(`"`+story+`"`))
		}
		hookWriteFile(t, filepath.Join(dir, de.Name()), b)
	}
	return dir
}

// hookRepo makes a git repository at <base>/repo holding the fixture
// story under each name given (committed), an epic and a source file, and
// returns its root.
func hookRepo(t testing.TB, base string, stories ...string) string {
	t.Helper()
	repo := filepath.Join(base, "repo")
	for _, story := range stories {
		hookCopyStory(t, repo, story)
	}
	hookWriteFile(t, filepath.Join(repo, ".saga", "epics", "ep", "epic.json"), []byte(`{"id":"ep","title":"E","description":"","children":[]}`+"\n"))
	hookWriteFile(t, filepath.Join(repo, "src", "main.go"), []byte("package main\n"))
	testkit.InitRepo(t, repo)
	hookWriteFile(t, filepath.Join(repo, ".git", "info", "exclude"), []byte(".saga/worktrees/\n"))
	return repo
}

// hookTree maps every path under root to its content (dirs: "<dir>").
func hookTree(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			snap[p] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		snap[p] = string(b)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return snap
}

func hookSameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ---- robustness: whatever comes in, exit 0, never hang, never panic ----

func TestHookBadInput(t *testing.T) {
	huge := `{"hook_event_name":"PostToolUse","x":"` + strings.Repeat("a", 5<<20) + `"}` + "\n"
	tests := []struct {
		name, payload string
		wantErr       string // substring of stderr; "" = stderr empty
	}{
		{"empty", "", "empty payload"},
		{"whitespace", " \n\t\n", "empty payload"},
		{"garbage", "garbage\x00\xff{", "not a JSON object"},
		{"array", `[{"hook_event_name":"PostToolUse"}]`, "not a JSON object"},
		{"truncated", `{"hook_event_name":"PostToolUse","tool_name":"TaskUp`, "not valid JSON"},
		{"wrong types", `{"hook_event_name":7}`, "hook_event_name is not a string"},
		{"no event", `{"session_id":"x","cwd":"/"}`, "no hook_event_name"},
		{"unknown event", `{"hook_event_name":"Stop","cwd":"/"}`, `event "Stop" is not handled`},
		{"5 MB", huge, "payload larger than 1 MiB ignored"},
		{"two objects", `{"hook_event_name":"PreToolUse"} {"x":1}`, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runHookIn(t, tc.payload, nil)
			if r.code != 0 {
				t.Errorf("exit %d, want 0", r.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if !strings.Contains(r.stderr, tc.wantErr) || !strings.HasPrefix(r.stderr, "saga-lsp hook: ") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one warning line with %q", r.stderr, tc.wantErr)
			}
		})
	}
}

// The limit is 1 MiB: a payload of exactly that size is read.
func TestHookPayloadLimit(t *testing.T) {
	mk := func(size int) string {
		head := `{"hook_event_name":"PreToolUse","tool_name":"Read","pad":"`
		tail := `"}`
		return head + strings.Repeat(" ", size-len(head)-len(tail)) + tail
	}
	if r := runHookIn(t, mk(MaxHookPayload), nil); r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Errorf("1 MiB payload: %+v, want a silent allow", r)
	}
	if r := runHookIn(t, mk(MaxHookPayload+1), nil); r.code != 0 || !strings.Contains(r.stderr, "payload larger than 1 MiB ignored") {
		t.Errorf("1 MiB + 1 payload: %+v, want the size warning", r)
	}
}

func TestHookRecoversFromPanic(t *testing.T) {
	var out, errb bytes.Buffer
	env := func(string) string { panic("boom") }
	payload := hookPayloadFrom(t, "posttooluse.json", nil)
	code := Hook(context.Background(), strings.NewReader(payload), env, &out, &errb, nil)
	if code != 0 || !strings.Contains(errb.String(), "internal error") || !strings.Contains(errb.String(), "boom") {
		t.Errorf("exit %d, stderr %q; want 0 and the panic as a warning", code, errb.String())
	}
}

// A reader that fails is a warning too.
func TestHookReadError(t *testing.T) {
	r := runHookReader(t, io.MultiReader(strings.NewReader(`{"hook_`), hookErrReader{}), nil)
	if r.code != 0 || !strings.Contains(r.stderr, "read stdin") {
		t.Errorf("%+v, want a read warning", r)
	}
}

type hookErrReader struct{}

func (hookErrReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

// The hook's own waits, and the work after them, fit in its shortest
// registration's timeout: Claude Code kills a hook past it.
func TestHookLimitsInsideTheRegistration(t *testing.T) {
	shortest := time.Duration(claudecode.TaskCompletedTimeout) * time.Second
	for _, h := range claudecode.Hooks {
		shortest = min(shortest, time.Duration(h.Timeout())*time.Second)
	}
	if l := defaultLimits(); l.read+l.lock > shortest/2 {
		t.Errorf("read %v + lock %v: over half of the shortest registered timeout, %v", l.read, l.lock, shortest)
	}
}

// A writer that never closes stdin: the hook goes on after the deadline
// (here 2 s: the hook's own is longer) with what it read, or at once when
// that is a whole payload line.
func TestHookStdinNeverCloses(t *testing.T) {
	for _, tc := range []struct {
		name, written string // "": nothing
		ok            func(hookResult) bool
		want          string
		min, max      time.Duration // bounds of the time it took
	}{
		{"partial payload", `{"hook_event_name":"PostTo`,
			func(r hookResult) bool { return r.code == 0 && strings.Contains(r.stderr, "not valid JSON") },
			"a JSON warning", 2 * time.Second, 3500 * time.Millisecond}, // 2–3 s, + slack for a loaded machine
		{"nothing written", "",
			func(r hookResult) bool { return r.code == 0 && strings.Contains(r.stderr, "no payload on stdin") },
			"a no-payload warning", 0, 3500 * time.Millisecond},
		{"whole payload without newline", `{"hook_event_name":"PreToolUse","tool_name":"Read"}`,
			func(r hookResult) bool { return r.code == 0 && r.stderr == "" && r.stdout == "" },
			"a silent allow", 2 * time.Second, 3500 * time.Millisecond}, // the deadline
		{"whole payload line", "{\"hook_event_name\":\"Stop\"}\n",
			func(r hookResult) bool { return r.code == 0 && strings.Contains(r.stderr, `"Stop" is not handled`) },
			"the payload handled", 0, time.Second}, // at once
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			if tc.written != "" {
				go func() { _, _ = pw.Write([]byte(tc.written)) }()
			}
			r := runHookLimits(t, pr, nil, limits{read: 2 * time.Second, lock: defaultLimits().lock})
			if !tc.ok(r) {
				t.Errorf("%+v, want %s", r, tc.want)
			}
			if r.elapsed < tc.min || r.elapsed > tc.max {
				t.Errorf("returned after %v, want %v–%v", r.elapsed, tc.min, tc.max)
			}
		})
	}
}

func TestHookContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb bytes.Buffer
	start := time.Now()
	if code := Hook(ctx, pr, hookEnv(nil), &out, &errb, nil); code != 0 {
		t.Errorf("exit %d", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v after cancel", d)
	}
}

func TestParseHookPayloadFixtures(t *testing.T) {
	for _, name := range []string{"posttooluse.json", "pretooluse.json", "sessionstart.json"} {
		p, err := ParseHookPayload(hookFixture(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Cwd != "/repo" || p.SessionID != "…" || p.HookEventName == "" {
			t.Errorf("%s: %+v", name, p)
		}
	}
}
