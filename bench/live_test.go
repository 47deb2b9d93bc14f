//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// liveChangesPerOp is how many status changes one op of
// BenchmarkLiveTaskStatus writes; the percentiles cover every op's.
const liveChangesPerOp = 20

// liveTasks is the size of the benchmark's story.
const liveTasks = 20

// BenchmarkLiveTaskStatus is the budget "a status change on disk →
// saga/taskStatus published ≤ 100 ms" (docs/architecture.md#budgets). The server (bin/
// saga-lsp, a process, as an editor runs it) starts on a workspace with a
// running-worker set-up: the story's worktree copy, an events file in the
// session dir whose worker.start names a live process that passes for the
// worker, so the server follows it. Each change writes one task file of
// the worktree copy atomically (temp file + rename, as the PostToolUse hook
// does) with the next status (pending → in_progress → completed →
// pending …), and is timed from the write until the saga/taskStatus for it
// arrives. Reports p50/p95/max in ms.
func BenchmarkLiveTaskStatus(b *testing.B) {
	bin := builtBinary(b)
	const story = "bench-live"
	root := b.TempDir()
	sessions := b.TempDir()
	b.Setenv("SAGA_SESSION_DIR", sessions) // the server inherits the environment
	b.Setenv("CLAUDE_CONFIG_DIR", b.TempDir())

	mainDir := filepath.Join(root, ".saga", "stories", story)
	wtDir := filepath.Join(root, ".saga", "worktrees", story, ".saga", "stories", story)
	for _, dir := range []string{mainDir, wtDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		write := func(name, text string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		write("story.json", fmt.Sprintf("{\n  \"id\": %q,\n  \"title\": \"Benchmark story\",\n  \"description\": \"\"\n}\n", story))
		for i := range liveTasks {
			write(liveTaskName(i)+".json", liveTaskJSON(i, "pending"))
		}
	}

	// The worker: a process whose command line names "worker" and the story,
	// working in the root, as `saga-lsp worker` would.
	worker := exec.Command("sh", "-c", "sleep 3600; :", "worker", story)
	worker.Dir = root
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // killed with its sleep
	if err := worker.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
		worker.Wait()
	}()
	session := fmt.Sprintf("saga-story-%s-%d", story, time.Now().UnixMilli())
	events := fmt.Sprintf(`{"time":"2026-01-01T00:00:00Z","story":%q,"session":%q,"event":"worker.start","pid":%d}`+"\n"+
		`{"time":"2026-01-01T00:00:00Z","story":%q,"session":%q,"event":"step","step":"lock","message":"holding the worker lock"}`+"\n",
		story, session, worker.Process.Pid, story, session)
	if err := os.WriteFile(filepath.Join(sessions, session+".log.events.jsonl"), []byte(events), 0o644); err != nil {
		b.Fatal(err)
	}

	c, err := startLSP(bin, []string{"serve"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.stop()
	params := map[string]any{
		"processId":             os.Getpid(),
		"rootUri":               lspclient.FileURI(root),
		"capabilities":          sagaCapabilities,
		"initializationOptions": map[string]any{"sagaNotifications": true},
	}
	if _, err := c.Call("initialize", params, lspTimeout); err != nil {
		b.Fatal(err)
	}
	if err := c.Notify("initialized", struct{}{}); err != nil {
		b.Fatal(err)
	}
	// Loaded, and the worker followed.
	deadline := time.Now().Add(lspTimeout)
	for loaded, following := false, false; !loaded || !following; {
		m, err := c.next(deadline)
		if err != nil {
			b.Fatalf("waiting for the server to load and follow the worker: %v", err)
		}
		loaded = loaded || (m.Method == "window/logMessage" && bytes.Contains(m.Params, []byte("saga-lsp: loaded")))
		following = following || (m.Method == "saga/workerProgress" && bytes.Contains(m.Params, []byte(`"state":"running"`)))
	}

	cycle := []string{"pending", "in_progress", "completed"}
	status := make([]int, liveTasks) // index into cycle
	var lat []float64
	n := 0
	for b.Loop() {
		for range liveChangesPerOp {
			i := n % liveTasks
			n++
			status[i] = (status[i] + 1) % len(cycle)
			to := cycle[status[i]]
			data := []byte(liveTaskJSON(i, to))
			t0 := time.Now()
			if err := filesafe.WriteFileAtomic(filepath.Join(wtDir, liveTaskName(i)+".json"), data, 0o644); err != nil {
				b.Fatal(err)
			}
			d, err := waitTaskStatus(c, liveTaskName(i), to, t0)
			if err != nil {
				b.Fatalf("change %d (%s → %s): %v", n, liveTaskName(i), to, err)
			}
			lat = append(lat, d.Seconds()*1e3)
		}
	}
	if len(lat) > 0 {
		b.ReportMetric(percentile(lat, 50), "p50-ms")
		b.ReportMetric(percentile(lat, 95), "p95-ms")
		b.ReportMetric(percentile(lat, 100), "max-ms")
		b.ReportMetric(float64(len(lat)), "changes")
	}
}

// waitTaskStatus waits for the saga/taskStatus announcing task's new status.
func waitTaskStatus(c *lspProc, task, to string, t0 time.Time) (time.Duration, error) {
	deadline := t0.Add(lspTimeout)
	for {
		m, err := c.next(deadline)
		if err != nil {
			return 0, err
		}
		if m.Method != "saga/taskStatus" {
			continue
		}
		var p struct {
			Task, To, Source string
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return 0, err
		}
		if p.Task == task && p.To == to {
			if p.Source != "hook" {
				return 0, fmt.Errorf("source %q, want hook (a change in the worktree copy while the worker runs)", p.Source)
			}
			return m.At.Sub(t0), nil
		}
	}
}

func liveTaskName(i int) string { return fmt.Sprintf("task-%02d", i) }

func liveTaskJSON(i int, status string) string {
	blocked := "[]"
	if i > 0 {
		blocked = fmt.Sprintf("[%q]", liveTaskName(i-1))
	}
	return strings.Join([]string{"{",
		fmt.Sprintf("  \"id\": %q,", liveTaskName(i)),
		fmt.Sprintf("  \"subject\": \"Task %d\",", i),
		"  \"description\": \"\",",
		fmt.Sprintf("  \"status\": %q,", status),
		fmt.Sprintf("  \"blockedBy\": %s", blocked),
		"}", ""}, "\n")
}
