package chaos_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// TestChaosWriters: many writers at once — hooks syncing task statuses
// under the story lock, `new task` creating files — some killed with
// SIGKILL at random moments. Afterwards every task file is whole and
// valid, no temp file is left once the next write has run, and the loader
// never shows one as a task.
func TestChaosWriters(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	wt := hookWorktree(t)
	story := filepath.Join(wt, ".saga", "stories", hookStory)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SAGA_STORY_ID=" + hookStory, "CLAUDE_PROJECT_DIR=" + wt}
	tasks := []string{"write-tests", "implement-button"}
	statuses := []string{"pending", "in_progress", "completed"}
	var mu sync.Mutex
	var started, killed int
	var wg sync.WaitGroup
	for n := 0; n < 8 || time.Now().Before(deadline); n++ {
		var cmd *exec.Cmd
		if r.IntN(3) == 0 {
			cmd = exec.Command(testkit.Binary(t), "new", "task", hookStory, fmt.Sprintf("made-%d", n), "--subject", "Made", "--root", wt)
		} else {
			task, to := tasks[r.IntN(len(tasks))], statuses[r.IntN(len(statuses))]
			cmd = exec.Command(testkit.Binary(t), "hook")
			cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"cwd":%q,"hook_event_name":"PostToolUse","tool_name":"TaskUpdate","tool_input":{"taskId":%q},"tool_response":{"success":true,"taskId":%q,"statusChange":{"from":"x","to":%q}}}`+"\n", wt, task, task, to))
		}
		cmd.Env, cmd.Dir = env, wt
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started++
		kill := r.IntN(2) == 0
		delay := time.Duration(r.IntN(4000)) * time.Microsecond
		wg.Go(func() {
			if kill {
				time.Sleep(delay) // a random moment of its life: the point of the test
				if cmd.Process.Signal(syscall.SIGKILL) == nil {
					mu.Lock()
					killed++
					mu.Unlock()
				}
			}
			err := cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return
			}
			if err != nil && !strings.Contains(stderr.String(), "already exists") {
				t.Errorf("%v: %v\n%s", cmd.Args, err, stderr.String())
			}
		})
		if n%4 == 3 {
			wg.Wait() // bursts of four at once
		}
	}
	wg.Wait()
	t.Logf("%d writers, %d killed; %d temp files before the next write", started, killed, countTemps(t, story))

	// The next write removes what killed writers left.
	cmd := exec.Command(testkit.Binary(t), "new", "task", hookStory, "after-the-storm", "--subject", "After", "--root", wt)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the next write: %v\n%s", err, out)
	}
	if n := countTemps(t, story); n != 0 {
		t.Errorf("%d temp files left after the next write", n)
	}
	checkTaskFiles(t, story)
	out, _ := exec.Command(testkit.Binary(t), "check", "--root", wt, "--format", "json").CombinedOutput()
	if bytes.Contains(out, []byte(".tmp-")) || bytes.Contains(out, []byte("json-syntax")) {
		t.Errorf("check after the storm: %s", out)
	}
}

func countTemps(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			n++
		}
	}
	return n
}
