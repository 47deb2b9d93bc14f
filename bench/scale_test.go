//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/bench/workload"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// "Cost follows the edit, not the workspace" (docs/architecture.md#budgets):
//
//   - BenchmarkLSPScale: the language server on W and on 4W (88,000 files),
//     side by side in each op: initialize → all diagnostics, keystroke →
//     versioned diagnostics p95, and peak RSS against the workspace's JSON
//     bytes.
//   - BenchmarkBigStory: check, plan and status on one story of 100,000
//     tasks (a random DAG), as processes; BenchmarkBigStoryEdit: one edit in
//     that story → its versioned diagnostics, in the language server.
//   - BenchmarkCycle: check on a story whose 10,000 tasks form one cycle.

// workload4W returns the root of 4W, generating it into <repo>/.bench/4W.
func workload4W(b *testing.B) string {
	b.Helper()
	w, err := workload.EnsureScaled(filepath.Join(testkit.ModuleRoot(b), ".bench", "4W"), 4)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// jsonBytes sums the sizes of the workspace's .json files.
func jsonBytes(b *testing.B, root string) int64 {
	b.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(root, ".saga"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// scaleRun is one server's life on one workspace: its start-up and typing.
type scaleRun struct {
	init    time.Duration
	latency []float64 // ms, every keystroke
	rss     float64   // peak MiB over the whole run
}

// lspScaleRun starts a server on w, waits for every file with findings to
// be published, types keystrokes in the benchmark's task file and stops it.
func lspScaleRun(b *testing.B, bin, w string, keystrokes int) scaleRun {
	b.Helper()
	want := expectedFindings(b, bin, w)
	task, partner := cycleTask(b, w, want)
	t0 := time.Now()
	c := startSaga(b, bin)
	defer c.stop()
	times, err := sagaInitialize(c, w, want, t0)
	if err != nil {
		b.Fatal(err)
	}
	run := scaleRun{init: times.init}
	doc := openTask(b, c, w, task, partner)
	for range keystrokes {
		d, _, err := sagaKeystroke(c, doc)
		if err != nil {
			b.Fatalf("keystroke %d in %s: %v", doc.n, task, err)
		}
		run.latency = append(run.latency, d.Seconds()*1e3)
	}
	run.rss = c.peakRSSMB()
	return run
}

// BenchmarkLSPScale runs, in each op, one server on W and one on 4W (so a
// noisy neighbour slows both alike) and reports each side and their ratios:
// the budgets are keystroke p95 ≤ 2 ms at 4W and ≤ 1.5× W's, peak RSS ≤ 3×
// the JSON bytes at 4W, initialize → all diagnostics at 4W ≤ 4× W's.
func BenchmarkLSPScale(b *testing.B) {
	bin := builtBinary(b)
	w, w4 := workloadW(b), workload4W(b)
	json4 := float64(jsonBytes(b, w4)) / (1 << 20)
	var latW, lat4, initW, init4, initRatio, rssW, rss4 []float64
	for b.Loop() {
		a := lspScaleRun(b, bin, w, lspKeystrokesPerOp)
		c := lspScaleRun(b, bin, w4, lspKeystrokesPerOp)
		latW, lat4 = append(latW, a.latency...), append(lat4, c.latency...)
		initW, init4 = append(initW, a.init.Seconds()), append(init4, c.init.Seconds())
		initRatio = append(initRatio, c.init.Seconds()/a.init.Seconds())
		rssW, rss4 = append(rssW, a.rss), append(rss4, c.rss)
	}
	pW, p4 := percentile(latW, 95), percentile(lat4, 95)
	b.ReportMetric(pW, "W-p95-ms")
	b.ReportMetric(p4, "4W-p95-ms")
	b.ReportMetric(p4/pW, "p95-4W/W")
	b.ReportMetric(median(initW), "W-init-s")
	b.ReportMetric(median(init4), "4W-init-s")
	b.ReportMetric(median(initRatio), "init-4W/W")
	b.ReportMetric(slices.Max(rssW), "W-RSS-MB")
	b.ReportMetric(slices.Max(rss4), "4W-RSS-MB")
	b.ReportMetric(json4, "4W-JSON-MB")
	b.ReportMetric(slices.Max(rss4)/json4, "4W-RSS/JSON")
}

// bigStory returns the root of the 100,000-task story's workspace.
func bigStory(b *testing.B) string {
	b.Helper()
	w, err := workload.EnsureBigStory(filepath.Join(testkit.ModuleRoot(b), ".bench", "big"), workload.BigStoryTasks, 1)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// timeCommand runs the saga-lsp binary with args and returns how long it
// took; its exit code must be want.
func timeCommand(b *testing.B, bin string, want int, args ...string) float64 {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// status lists tmux sessions and runs: an empty session dir, no tmux.
	cmd.Env = append(os.Environ(), "SAGA_SESSION_DIR="+b.TempDir(), "PATH=/nonexistent")
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start).Seconds()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		b.Fatalf("saga-lsp %s: %v", strings.Join(args, " "), err)
	}
	if code != want {
		b.Fatalf("saga-lsp %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, stderr.Bytes())
	}
	return d
}

// BenchmarkBigStory times check, plan and status (each ≤ 2 s) on the
// 100,000-task story, as processes, one after the other in each op.
func BenchmarkBigStory(b *testing.B) {
	bin := builtBinary(b)
	w := bigStory(b)
	var check, pl, status []float64
	for b.Loop() {
		check = append(check, timeCommand(b, bin, 0, "check", "--root", w, "--format", "json"))
		pl = append(pl, timeCommand(b, bin, 0, "plan", "--root", w, workload.BigStoryID, "--format", "json"))
		status = append(status, timeCommand(b, bin, 0, "status", "--root", w, workload.BigStoryID))
	}
	b.ReportMetric(median(check), "check-s")
	b.ReportMetric(median(pl), "plan-s")
	b.ReportMetric(median(status), "status-s")
}

// bigStoryEdits is how many edits one op of BenchmarkBigStoryEdit types.
const bigStoryEdits = 20

// BenchmarkBigStoryEdit: one edit in a task of the 100,000-task story →
// that file's versioned diagnostics (and the partner's, when the edit makes
// or breaks a two-task cycle), p95 ≤ 50 ms.
func BenchmarkBigStoryEdit(b *testing.B) {
	bin := builtBinary(b)
	w := bigStory(b)
	want := &expectation{files: map[string]bool{}, rels: map[string]bool{}}
	task, partner := cycleTask(b, w, want)
	c := startSaga(b, bin)
	defer c.stop()
	if _, err := sagaInitialize(c, w, want, time.Now()); err != nil {
		b.Fatal(err)
	}
	doc := openTask(b, c, w, task, partner)
	var lat []float64
	for b.Loop() {
		for range bigStoryEdits {
			d, _, err := sagaKeystroke(c, doc)
			if err != nil {
				b.Fatalf("edit %d in %s: %v", doc.n, task, err)
			}
			lat = append(lat, d.Seconds()*1e3)
		}
	}
	reportLatencies(b, lat, "edit-")
	b.ReportMetric(c.peakRSSMB(), "peak-RSS-MB")
}

// BenchmarkCycle: check on a story whose 10,000 tasks form one dependency
// cycle (≤ 1 s). Every entry on the cycle is reported; each message names
// the cycle's length and elides its middle, so the output stays small.
func BenchmarkCycle(b *testing.B) {
	bin := builtBinary(b)
	w, err := workload.EnsureCycle(filepath.Join(testkit.ModuleRoot(b), ".bench", "ring"), workload.CycleTasks)
	if err != nil {
		b.Fatal(err)
	}
	var secs []float64
	for b.Loop() {
		secs = append(secs, timeCommand(b, bin, 1, "check", "--root", w, "--format", "json"))
	}
	b.ReportMetric(median(secs), "check-s")
	// Untimed: what was reported.
	out, _ := exec.Command(bin, "check", "--root", w, "--format", "json").Output()
	var res struct {
		Diagnostics []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatal(err)
	}
	longest := 0
	for _, d := range res.Diagnostics {
		if d.Code != "dependency-cycle" {
			b.Fatalf("unexpected %s: %s", d.Code, d.Message)
		}
		longest = max(longest, len(d.Message))
	}
	// The first three and last three members are shown: 9,994 elided.
	if len(res.Diagnostics) != workload.CycleTasks || !strings.Contains(res.Diagnostics[0].Message, "of 10,000 tasks") ||
		!strings.Contains(res.Diagnostics[0].Message, "… 9,994 more …") {
		b.Fatalf("%d diagnostics; the first: %s", len(res.Diagnostics), res.Diagnostics[0].Message)
	}
	b.ReportMetric(float64(longest), "longest-message-B")
	b.ReportMetric(float64(len(out))/(1<<20), "output-MB")
}
