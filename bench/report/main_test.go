package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
cpu: AMD EPYC
BenchmarkFloor-2         	      10	 400000000 ns/op	     21990 files/op	74876458 B/op	  938273 allocs/op
BenchmarkCheck-2         	      10	 600000000 ns/op	       440.0 diagnostics/op	299430017 B/op	 2032814 allocs/op
--- SKIP: BenchmarkCheckBinary-2
    bench_test.go:150: /repo/bin/saga-lsp is missing: run make build first
BenchmarkCheckPaired-2   	      10	 850000000 ns/op	         1.1 check/floor	         0.45 check-s	         0.41 floor-s
PASS
`

func TestReportBudgets(t *testing.T) {
	results, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printReport(&out, results)
	for _, want := range []string{
		"check (in-process) vs in-process floor = 0.6 s = 1.50 × floor (budget ≤ 1.2)  OVER",
		"check: saga-lsp binary vs floor program (paired) = 0.45 s = 1.10 × floor (budget ≤ 1.2)  PASS",
		"check (binary) vs in-process floor: SKIP (bench_test.go:150: /repo/bin/saga-lsp is missing: run make build first)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestReportMissingFloor(t *testing.T) {
	results, _ := parse(strings.NewReader("BenchmarkCheck-2  10  600000000 ns/op\n"))
	var out strings.Builder
	printReport(&out, results)
	if !strings.Contains(out.String(), "no floor in this run") {
		t.Errorf("got\n%s", out.String())
	}
	out.Reset()
	printReport(&out, nil)
	if !strings.Contains(out.String(), "no benchmark results") {
		t.Errorf("got\n%s", out.String())
	}
}

func TestReportMedianOfCounts(t *testing.T) {
	results, _ := parse(strings.NewReader("BenchmarkFloor-2 10 100 ns/op\nBenchmarkFloor-2 10 900 ns/op\nBenchmarkFloor-2 10 200 ns/op\n"))
	if got, _ := results[0].median("ns/op"); got != 200 {
		t.Errorf("median = %v, want 200", got)
	}
}

const lspSample = `BenchmarkFloor-2                 	      10	 400000000 ns/op
BenchmarkLSPInit-2               	      10	 700000000 ns/op	         0.2684 floor-s	         0.3635 init-s	         1.354 init/floor	       135.9 load-RSS-MB	         0.3486 loaded-s
BenchmarkLSPKeystroke-2          	      10	 130196628 ns/op	      1000 keystrokes	       134.5 load-RSS-MB	        21.14 max-ms	         0.8308 p50-ms	         2.775 p95-ms	       209.9 peak-RSS-MB
BenchmarkLSPKeystroke-2          	      10	 130196628 ns/op	      1000 keystrokes	       134.5 load-RSS-MB	        21.14 max-ms	         0.8308 p50-ms	        12.5 p95-ms	       190.1 peak-RSS-MB
BenchmarkLSPKeystroke-2          	      10	 130196628 ns/op	      1000 keystrokes	       134.5 load-RSS-MB	        21.14 max-ms	         0.8308 p50-ms	        14 p95-ms	       195.5 peak-RSS-MB
BenchmarkVSCodeJSONKeystroke-2   	       3	1531338768 ns/op	         9.000 keystrokes	       503.7 max-ms	       502.6 p50-ms	       503.7 p95-ms	        58.98 peak-RSS-MB	         0.5252 pull-p50-ms	         1.922 pull-p95-ms
PASS
`

func TestReportLanguageServerBudgets(t *testing.T) {
	results, err := parse(strings.NewReader(lspSample))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printReport(&out, results)
	for _, want := range []string{
		"language server: initialize → all diagnostics = 0.3635 s = 1.35 × floor (budget ≤ 4)  PASS",
		// Medians over the three -count runs: 12.5 ms and 195.5 MB.
		"keystroke → diagnostics p95 = 12.5 ms (budget ≤ 10 ms)  OVER",
		"language server peak RSS = 195.5 MB (budget ≤ 200 MB)  PASS",
		"VS Code JSON server: keystroke → pushed diagnostics p95 = 503.7 ms (for comparison; no budget)",
		"VS Code JSON server: keystroke → pulled diagnostics p95 = 1.922 ms (for comparison; no budget)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestReportLanguageServerSkipped(t *testing.T) {
	const skipped = `BenchmarkFloor-2  10  400000000 ns/op
--- SKIP: BenchmarkLSPInit-2
    lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build
--- SKIP: BenchmarkLSPKeystroke-2
    lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build
--- SKIP: BenchmarkVSCodeJSONKeystroke-2
    lsp_vscode_test.go:45: node_modules is missing
`
	results, _ := parse(strings.NewReader(skipped))
	var out strings.Builder
	printReport(&out, results)
	for _, want := range []string{
		"language server: initialize → all diagnostics: SKIP (lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build)",
		"keystroke → diagnostics p95: SKIP (lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build)",
		"language server peak RSS: SKIP (lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	// Comparison lines carry no verdict, so a skipped comparison stays in
	// the table only.
	if strings.Contains(out.String(), "VS Code JSON server: keystroke") {
		t.Errorf("skipped comparison printed as a budget line:\n%s", out.String())
	}
}

func TestReportLiveTaskStatusBudget(t *testing.T) {
	const live = `BenchmarkLiveTaskStatus-2   	      10	 164466913 ns/op	       200.0 changes	        14.36 max-ms	         7.726 p50-ms	        10.71 p95-ms
BenchmarkLiveTaskStatus-2   	      10	 164466913 ns/op	       200.0 changes	        140.1 max-ms	         7.9 p50-ms	        120.5 p95-ms
BenchmarkLiveTaskStatus-2   	      10	 164466913 ns/op	       200.0 changes	        15.2 max-ms	         7.8 p50-ms	        11.2 p95-ms
`
	results, err := parse(strings.NewReader(live))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printReport(&out, results)
	// The median of the three runs' p95.
	if want := "status change on disk → saga/taskStatus p95 = 11.2 ms (budget ≤ 100 ms)  PASS"; !strings.Contains(out.String(), want) {
		t.Errorf("missing %q in\n%s", want, out.String())
	}
	results, _ = parse(strings.NewReader("--- SKIP: BenchmarkLiveTaskStatus-2\n    lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build\n"))
	out.Reset()
	printReport(&out, results)
	if want := "status change on disk → saga/taskStatus p95: SKIP (lsp_test.go:52: /repo/bin/saga-lsp is missing: run make build)"; !strings.Contains(out.String(), want) {
		t.Errorf("missing %q in\n%s", want, out.String())
	}
}

const scaleSample = `BenchmarkLSPScale-2   	       2	4011837848 ns/op	        71.21 4W-JSON-MB	       456.3 4W-RSS-MB	         6.408 4W-RSS/JSON	         2.925 4W-init-s	        1.5 4W-p95-ms	       130.6 W-RSS-MB	         0.3665 W-init-s	         1.2 W-p95-ms	        3.9 init-4W/W	        1.25 p95-4W/W
BenchmarkBigStory-2   	       2	3436174855 ns/op	         1.276 check-s	         1.210 plan-s	         2.5 status-s
`

func TestReportScale(t *testing.T) {
	results, _ := parse(strings.NewReader(scaleSample))
	var out strings.Builder
	printReport(&out, results)
	for _, want := range []string{
		"language server, W (22,000 files) and 4W (88,000 files) in the same run:",
		"initialize → all diagnostics  0.3665 s  2.925 s   3.90 ×",
		"keystroke → diagnostics p95   1.2 ms    1.5 ms    1.25 ×",
		"peak RSS                      130.6 MB  456.3 MB  3.49 ×",
		"4W: peak RSS ÷ JSON bytes = 6.408 × (budget ≤ 4 ×)  OVER",
		"keystroke p95, 4W ÷ W = 1.25 × (budget ≤ 1.5 ×)  PASS",
		"100,000-task story: status = 2.5 s (budget ≤ 2 s)  OVER",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}
