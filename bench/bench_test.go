package bench

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/bench/floorpass"
	"github.com/saga-ai/saga-lsp/bench/workload"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// builtBinary is bin/saga-lsp, as make build leaves it, or skips the
// benchmark when it is missing.
func builtBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(testkit.ModuleRoot(b), "bin", "saga-lsp")
	if _, err := os.Stat(bin); err != nil {
		testkit.Needs(b, bin+" is missing: run make build first")
	}
	return bin
}

// builtHookProgram is the hook program beside builtBinary that the worker
// registers (runs.HookProgram): make build leaves saga-lsp-hook there.
func builtHookProgram(b *testing.B) string {
	b.Helper()
	bin := builtBinary(b)
	prog := runs.HookProgram(bin)
	if prog == bin {
		testkit.Needs(b, "no saga-lsp-hook of the same build beside "+bin+": run make build first")
	}
	return prog
}

// workloadW returns the root of W, generating it into <repo>/.bench/W on
// first use; later calls only read the marker.
func workloadW(b *testing.B) string {
	b.Helper()
	w, err := workload.Ensure(filepath.Join(testkit.ModuleRoot(b), ".bench", "W"))
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// freshHeap collects garbage outside the timer, so every pass starts with
// the small heap goal of a fresh process, as the budget's programs do; else a
// pass runs under the large goal the previous pass's live heap left, and GC
// all but disappears from the in-process figures.
func freshHeap(b *testing.B) {
	b.StopTimer()
	runtime.GC()
	b.StartTimer()
}

// BenchmarkFloor is the floor F of the budget: list W's files, read each
// and decode it with encoding/json on 2 goroutines. One op is one full pass.
func BenchmarkFloor(b *testing.B) {
	sagaDir := filepath.Join(workloadW(b), ".saga")
	b.ReportAllocs()
	var decoded int
	for b.Loop() {
		freshHeap(b)
		_, n, err := floorpass.Run(sagaDir)
		if err != nil {
			b.Fatal(err)
		}
		decoded = n
	}
	b.ReportMetric(float64(decoded), "files/op")
}

// BenchmarkCheck is `saga-lsp check` in-process: compile the schemas, load
// and check W, collect the diagnostics. One op is one full pass.
func BenchmarkCheck(b *testing.B) {
	w := workloadW(b)
	b.ReportAllocs()
	var found int
	for b.Loop() {
		freshHeap(b)
		ws := workspace.Load(b, w)
		found = len(ws.Diagnostics())
	}
	if found == 0 {
		b.Fatal("no diagnostics on W, which has deliberate findings")
	}
	b.ReportMetric(float64(found), "diagnostics/op")
}

// BenchmarkCheckPaired is the budget as docs/architecture.md#budgets states it: the
// saga-lsp binary checking W against the floor program (bench/floor) reading
// and decoding W, both as processes, alternating within each op so that a
// noisy neighbour slows both alike. It reports the median ratio.
func BenchmarkCheckPaired(b *testing.B) {
	bin := builtBinary(b)
	floor := testkit.Build(b, "./bench/floor")
	w := workloadW(b)
	var floorS, checkS, ratios []float64
	for b.Loop() {
		start := time.Now()
		if out, err := exec.Command(floor, w).CombinedOutput(); err != nil {
			b.Fatalf("floor: %v\n%s", err, out)
		}
		mid := time.Now()
		cmd := exec.Command(bin, "check", "--root", w, "--format", "json")
		cmd.Stdout = io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wantFindings(b, cmd.Run(), &stderr)
		end := time.Now()
		f, c := mid.Sub(start).Seconds(), end.Sub(mid).Seconds()
		floorS, checkS, ratios = append(floorS, f), append(checkS, c), append(ratios, c/f)
	}
	b.ReportMetric(median(floorS), "floor-s")
	b.ReportMetric(median(checkS), "check-s")
	b.ReportMetric(median(ratios), "check/floor")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// BenchmarkCheckBinary runs the built binary on W, so process start, output
// encoding and the binary's own settings count too. It also reports the
// binary's peak RSS.
func BenchmarkCheckBinary(b *testing.B) {
	bin := builtBinary(b)
	w := workloadW(b)
	check := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, "check", "--root", w, "--format", "json")
		cmd.Stdout = io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		return cmd, &stderr
	}
	for b.Loop() {
		cmd, stderr := check()
		wantFindings(b, cmd.Run(), stderr)
	}
	// One more, untimed run for the peak RSS: sampling /proc while timing
	// would take CPU from the check on these 2-core machines.
	cmd, stderr := check()
	peak, err := runPeakRSS(cmd)
	wantFindings(b, err, stderr)
	if peak.KB > 0 {
		b.ReportMetric(float64(peak.KB)/1024, "peak-RSS-MB")
	}
}

// wantFindings fails unless the check exited with 1: W has error findings,
// so 0 means the check missed them and 2 means it could not run.
func wantFindings(b *testing.B, err error, stderr *bytes.Buffer) {
	b.Helper()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		b.Fatalf("saga-lsp check on W: want exit code 1 (findings), got %v\n%s", err, stderr.Bytes())
	}
}

// BenchmarkParseTask parses one clean task file of W: the per-file cost,
// for profiling parse, validation and extraction without I/O.
func BenchmarkParseTask(b *testing.B) {
	w := workloadW(b)
	p := workspace.Parser(b)
	rel, src := cleanTaskFile(b, p, w)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		p.Parse(rel, src, -1)
	}
}

// cleanTaskFile picks the first task file of W (in name order) that has no
// diagnostic of its own, so the benchmark measures the common case.
func cleanTaskFile(b *testing.B, p *store.Parser, w string) (string, []byte) {
	b.Helper()
	storiesDir := filepath.Join(w, ".saga", "stories")
	stories, err := os.ReadDir(storiesDir)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range stories {
		files, err := os.ReadDir(filepath.Join(storiesDir, s.Name()))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			rel := path.Join(".saga/stories", s.Name(), f.Name())
			if kind, _, _ := store.Classify(rel); kind != store.KindTask {
				continue
			}
			src, err := os.ReadFile(filepath.Join(w, filepath.FromSlash(rel)))
			if err != nil {
				b.Fatal(err)
			}
			if len(p.Parse(rel, src, -1).Local) == 0 {
				return rel, src
			}
		}
	}
	b.Fatal("W has no clean task file")
	return "", nil
}

// BenchmarkNewParser is the schema compilation every check pays once.
func BenchmarkNewParser(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.NewParser(); err != nil {
			b.Fatal(err)
		}
	}
}
