package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The cross-process tests run real hook processes: the saga-lsp binary,
// built once by the test kit.

// hookProc is a `saga-lsp hook` process with exactly env (plus PATH, HOME,
// TMPDIR), so a CLAUDE_* or SAGA_* of the test's own environment cannot
// leak in.
func hookProc(t testing.TB, env map[string]string) *exec.Cmd {
	t.Helper()
	return hookProcOf(testkit.Binary(t), env)
}

// hookProcOf is hookProc of the program bin (saga-lsp or saga-lsp-hook).
func hookProcOf(bin string, env map[string]string) *exec.Cmd {
	cmd := exec.Command(bin, "hook")
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// procResult runs cmd with stdin and returns what it did.
func procResult(cmd *exec.Cmd, stdin []byte) (stdout, stderr string, code int, err error) {
	var out, errb bytes.Buffer
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

// bigTask is task file i of the concurrency tests, in one of four layouts.
func bigTask(i int) (src []byte, status string) {
	status = []string{"pending", "in_progress"}[i%2]
	id := fmt.Sprintf("t%d", i)
	switch i % 4 {
	case 0:
		src = fmt.Appendf(nil, "{\n  \"id\": %q,\n  \"subject\": \"Task %d\",\n  \"description\": \"plain\",\n  \"status\": %q,\n  \"blockedBy\": []\n}\n", id, i, status)
	case 1:
		src = fmt.Appendf(nil, "{\r\n\t\"id\"\t: %q ,\r\n\t\"status\" :%q,\r\n\t\"subject\" : \"CRLF \\\"quoted\\\" %d\",\r\n\t\"description\":\"\",\r\n\t\"blockedBy\" : [ \"t0\" ]\r\n}", id, status, i)
	case 2:
		src = fmt.Appendf(nil, `{"id":%q,"subject":"compact %d","description":"","status":%q,"blockedBy":[]}`, id, i, status)
	default:
		src = fmt.Appendf(nil, "{\n\n    \"description\": \"ünïcödé → %d, status: done\",\n    \"status\":     %q   ,\n\n    \"id\": %q, \"subject\": \"s\",\n    \"blockedBy\": [],\n    \"priority\": \"low\"\n}\n\n", i, status, id)
	}
	return src, status
}

func bigStory(t *testing.T, n int) (root, dir string, orig map[string][]byte, status map[string]string) {
	t.Helper()
	root = filepath.Join(hookBaseDir(t), "root")
	hookWriteFile(t, filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"))
	dir = filepath.Join(root, ".saga", "stories", "big")
	hookWriteFile(t, filepath.Join(dir, "story.json"), []byte(`{"id":"big","title":"Big","description":""}`+"\n"))
	orig, status = map[string][]byte{}, map[string]string{}
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		orig[id], status[id] = bigTask(i)
		hookWriteFile(t, filepath.Join(dir, id+".json"), orig[id])
	}
	return root, dir, orig, status
}

func updatePayload(t testing.TB, task, from, to string) []byte {
	return []byte(hookPostPayload(t, map[string]any{
		"cwd":           "/repo",
		"tool_input":    map[string]any{"taskId": task, "status": to},
		"tool_response": hookTaskResponse(true, task, from, to),
	}))
}

// 60 hook processes at once, each completing another task of one story:
// every update lands, and only the status value's bytes change.
func TestHookProcessesConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 60 processes")
	}
	const n = 60
	root, dir, orig, status := bigStory(t, n)
	env := map[string]string{"SAGA_STORY_ID": "big", "SAGA_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}
	type res struct {
		id, stdout, stderr string
		code               int
		err                error
	}
	results := make(chan res, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		payload := updatePayload(t, id, status[id], "completed")
		wg.Go(func() {
			out, errs, code, err := procResult(hookProc(t, env), payload)
			results <- res{id, out, errs, code, err}
		})
	}
	wg.Wait()
	close(results)
	t.Logf("%d processes in %v", n, time.Since(start))
	for r := range results {
		if r.err != nil || r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%s: exit %d, err %v, stdout %q, stderr %q", r.id, r.code, r.err, r.stdout, r.stderr)
		}
	}
	for id, src := range orig {
		got, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if want := hookWithStatus(t, src, status[id], "completed"); !bytes.Equal(got, want) {
			t.Errorf("%s:\n%q\nwant\n%q", id, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s is not valid JSON", id)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(leftovers) > 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

// Hook processes SIGKILLed at random moments while syncing: every task file
// stays valid JSON holding one of the statuses written, byte for byte, and
// the story lock is not left stuck.
func TestHookProcessesKillStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts hundreds of processes")
	}
	const tasks, procs, parallel = 20, 240, 16
	root, dir, orig, status := bigStory(t, tasks)
	env := map[string]string{"SAGA_STORY_ID": "big", "SAGA_PROJECT_DIR": root}
	statuses := []string{"pending", "in_progress", "completed"}

	// How long one sync takes end to end, to aim the kills at it.
	t0 := time.Now()
	if _, errs, code, err := procResult(hookProc(t, env), updatePayload(t, "t0", status["t0"], "completed")); err != nil || code != 0 || errs != "" {
		t.Fatalf("calibration run: %v %d %q", err, code, errs)
	}
	one := time.Since(t0)
	t.Logf("one hook process: %v", one)

	// The kill delays adapt so that about half the processes finish: the
	// other half die at every stage, the write included.
	var finished sync.WaitGroup
	var mu sync.Mutex
	nKilled, nDone := 0, 0
	scale := 2.0
	sem := make(chan struct{}, parallel)
	for range procs {
		sem <- struct{}{}
		id := fmt.Sprintf("t%d", rand.IntN(tasks))
		to := statuses[rand.IntN(len(statuses))]
		cmd := hookProc(t, env)
		cmd.Stdin = bytes.NewReader(updatePayload(t, id, "pending", to))
		mu.Lock()
		delay := time.Duration(rand.Float64() * scale * float64(one))
		mu.Unlock()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		finished.Go(func() {
			defer func() { <-sem }()
			timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
			err := cmd.Wait()
			stopped := timer.Stop()
			mu.Lock()
			defer mu.Unlock()
			if stopped && err == nil {
				nDone++
			} else {
				nKilled++
			}
			if nDone < nKilled {
				scale *= 1.05
			} else {
				scale /= 1.05
			}
		})
	}
	finished.Wait()
	t.Logf("%d processes: %d finished, %d killed", procs, nDone, nKilled)

	changed := 0
	for id, src := range orig {
		got, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			changed++
		}
		ok := false
		for _, s := range statuses {
			if bytes.Equal(got, hookWithStatus(t, src, status[id], s)) {
				ok = true
			}
		}
		if !ok || !json.Valid(got) {
			t.Errorf("%s is neither the old nor a new version:\n%q", id, got)
		}
	}
	t.Logf("%d of %d task files hold a new status", changed, tasks)
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	t.Logf("temp files left by killed writers (ignored by the loader): %d", len(leftovers))

	// The lock died with its holders: a last sync goes through at once.
	for id := range orig {
		_, errs, code, err := procResult(hookProc(t, env), updatePayload(t, id, "pending", "completed"))
		if err != nil || code != 0 || errs != "" {
			t.Fatalf("after the storm %s: %v %d %q", id, err, code, errs)
		}
		got, _ := os.ReadFile(filepath.Join(dir, id+".json"))
		if !bytes.Equal(got, hookWithStatus(t, orig[id], status[id], "completed")) {
			t.Errorf("after the storm %s: %q", id, got)
		}
	}
}

// Real processes with bad stdin: exit 0, bounded time.
func TestHookProcessesBadStdin(t *testing.T) {
	t.Run("stdin never closes", func(t *testing.T) {
		t.Parallel() // it waits out the hook's deadline
		read := defaultLimits().read
		cmd := hookProc(t, nil)
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(`{"hook_event_name":"PostToolUse","tool_na`)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			elapsed := time.Since(start)
			if err != nil {
				t.Errorf("exit: %v (stderr %q)", err, errb.String())
			}
			if elapsed < read || elapsed > read+3*time.Second {
				t.Errorf("returned after %v, want about %v", elapsed, read)
			}
			if !strings.Contains(errb.String(), "saga-lsp hook: payload is not valid JSON") {
				t.Errorf("stderr %q", errb.String())
			}
		case <-time.After(2 * read):
			_ = cmd.Process.Kill()
			t.Fatalf("hook still running after %v with stdin open", 2*read)
		}
	})
	for name, in := range map[string][]byte{
		"5 MB":    bytes.Repeat([]byte("x"), 5<<20),
		"garbage": []byte("\x00\x01not json at all"),
		"empty":   nil,
	} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code, err := procResult(hookProc(t, nil), in)
			if err != nil || code != 0 || stdout != "" || !strings.HasPrefix(stderr, "saga-lsp hook: ") {
				t.Errorf("err %v, exit %d, stdout %q, stderr %q", err, code, stdout, stderr)
			}
		})
	}
}

// A deny from a real process: the exact JSON on stdout, exit 0.
func TestHookProcessDeny(t *testing.T) {
	base := hookBaseDir(t)
	wt := filepath.Join(base, "repo", ".saga", "worktrees", "my-story")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	p := hookPrePayload(t, "Write", map[string]any{"file_path": filepath.Join(wt, ".saga", "epics", "e", "epic.json")}, wt)
	stdout, stderr, code, err := procResult(hookProc(t, nil), []byte(p))
	if err != nil || code != 0 || stderr != "" || !strings.HasPrefix(stdout, hookDenyPrefix) {
		t.Errorf("err %v, exit %d, stdout %q, stderr %q", err, code, stdout, stderr)
	}
}
