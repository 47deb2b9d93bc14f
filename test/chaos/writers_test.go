//go:build unix

package chaos_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// TestChaosWriters: many writers at once — hooks syncing task statuses
// under the story lock, `new task` creating files — some killed with
// SIGKILL at moments of their writes drawn from the seed. Afterwards every task file is whole and
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
	moments := watchWriters(t, story)
	var mu sync.Mutex
	var started, killed, died int
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
		// Half the writers are killed, each at a moment of its write drawn
		// from the seed: at once, or when its temp file is created, written
		// or renamed over the task file, as the directory's events show.
		moment := -1
		if r.IntN(2) == 0 {
			moment = r.IntN(len(writerMoments) + 1)
		}
		wg.Go(func() {
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var at <-chan struct{}
			switch {
			case moment == len(writerMoments):
				c := make(chan struct{})
				close(c)
				at = c
			case moment >= 0:
				at = moments.at(cmd.Process.Pid, writerMoments[moment])
			}
			var err error
			select {
			case <-at:
				if cmd.Process.Signal(syscall.SIGKILL) == nil {
					mu.Lock()
					killed++
					mu.Unlock()
				}
				err = <-exited
			case err = <-exited:
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				mu.Lock()
				died++
				mu.Unlock()
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
	t.Logf("%d writers, %d killed (%d died of it before their end); %d temp files before the next write", started, killed, died, countTemps(t, story))

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

// writerMoments are the moments of an atomic write a writer can be killed
// at, as the story folder's events show them for its temp file
// (".<base>.tmp-<pid>-<random>"): made, written, renamed over its target.
var writerMoments = [...]fsnotify.Op{fsnotify.Create, fsnotify.Write, fsnotify.Rename}

// writerEvents follows a folder's events by the pid in each temp file's
// name, remembering what each writer has done so that a moment is seen
// even when it came before anyone asked for it.
type writerEvents struct {
	mu      sync.Mutex
	seen    map[int]fsnotify.Op
	waiting map[int][]moment
}

type moment struct {
	op fsnotify.Op
	c  chan struct{}
}

func watchWriters(t *testing.T, dir string) *writerEvents {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ev := &writerEvents{seen: map[int]fsnotify.Op{}, waiting: map[int][]moment{}}
	go func() {
		for e := range w.Events {
			_, rest, ok := strings.Cut(filepath.Base(e.Name), ".tmp-")
			digits, _, _ := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(digits)
			if !ok || err != nil {
				continue
			}
			ev.saw(pid, e.Op)
		}
	}()
	return ev
}

func (ev *writerEvents) saw(pid int, op fsnotify.Op) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.seen[pid] |= op
	keep := ev.waiting[pid][:0]
	for _, m := range ev.waiting[pid] {
		if op.Has(m.op) {
			close(m.c)
		} else {
			keep = append(keep, m)
		}
	}
	ev.waiting[pid] = keep
}

// at is closed once the writer pid's temp file has had op.
func (ev *writerEvents) at(pid int, op fsnotify.Op) <-chan struct{} {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	c := make(chan struct{})
	if ev.seen[pid].Has(op) {
		close(c)
	} else {
		ev.waiting[pid] = append(ev.waiting[pid], moment{op, c})
	}
	return c
}
