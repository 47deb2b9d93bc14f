package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestReport runs every testdata/*.txtar case: the report printed for the
// benchmark output in "bench" contains every line of "want" and no line of
// "absent" (lines starting with # are comments), and it exits with the
// code in "exit" (0 when there is none).
func TestReport(t *testing.T) {
	testkit.RunArchives(t, "testdata/*.txtar", func(t *testing.T, section map[string]string) {
		var b, e strings.Builder
		code := run(strings.NewReader(section["bench"]), &b, &e)
		out := b.String()
		want := 0
		if s := strings.TrimSpace(section["exit"]); s != "" {
			var err error
			if want, err = strconv.Atoi(s); err != nil {
				t.Fatalf("exit section %q: %v", s, err)
			}
		}
		if code != want {
			t.Errorf("exit code %d, want %d; output:\n%s%s", code, want, out, e.String())
		}
		for _, line := range testkit.Expectations(section["want"]) {
			if !strings.Contains(out, line) {
				t.Errorf("missing %q in\n%s", line, out)
			}
		}
		for _, line := range testkit.Expectations(section["absent"]) {
			if strings.Contains(out, line) {
				t.Errorf("%q should not be in\n%s", line, out)
			}
		}
	})
}

func TestReportMedianOfCounts(t *testing.T) {
	results, _ := parse(strings.NewReader("BenchmarkFloor-2 10 100 ns/op\nBenchmarkFloor-2 10 900 ns/op\nBenchmarkFloor-2 10 200 ns/op\n"))
	if got, _ := results[0].median("ns/op"); got != 200 {
		t.Errorf("median = %v, want 200", got)
	}
}

// TestMissedBudgetFailsMakeBench runs the report as make bench does (a
// process reading the benchmark output on stdin): a missed budget is
// printed with ✗ and the process exits 1, a run within every budget exits
// 0.
func TestMissedBudgetFailsMakeBench(t *testing.T) {
	bin := testkit.Build(t, "./bench/report")
	report := func(input string) (string, int) {
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(input)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}
	out, code := report("BenchmarkLiveTaskStatus-2  10  1 ns/op  150 p95-ms\n")
	if code != 1 || !strings.Contains(out, "status change on disk → saga/taskStatus p95 = 150 ms (budget ≤ 100 ms)  ✗ OVER") {
		t.Errorf("a missed budget: exit %d, want 1, and its ✗ line in\n%s", code, out)
	}
	out, code = report("BenchmarkLiveTaskStatus-2  10  1 ns/op  40 p95-ms\n")
	if code != 0 || !strings.Contains(out, "(budget ≤ 100 ms)  ✓ PASS") || strings.Contains(out, "✗") {
		t.Errorf("a budget kept: exit %d, want 0, and its ✓ line in\n%s", code, out)
	}
}
