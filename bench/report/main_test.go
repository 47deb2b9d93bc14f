package main

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestReport runs every testdata/*.txtar case: the report printed for the
// benchmark output in "bench" contains every line of "want" and no line of
// "absent" (lines starting with # are comments).
func TestReport(t *testing.T) {
	testkit.RunArchives(t, "testdata/*.txtar", func(t *testing.T, section map[string]string) {
		results, err := parse(strings.NewReader(section["bench"]))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		printReport(&b, results)
		out := b.String()
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
