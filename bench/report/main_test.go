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
