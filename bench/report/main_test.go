package main

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestReport runs every testdata/*.txtar case: the report printed for the
// benchmark output in "bench" contains every line of "want" and no line of
// "absent" (lines starting with # are comments).
func TestReport(t *testing.T) {
	cases, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no report cases found: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			section := map[string]string{}
			for _, f := range a.Files {
				section[f.Name] = string(f.Data)
			}
			results, err := parse(strings.NewReader(section["bench"]))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			printReport(&b, results)
			out := b.String()
			for line := range expectations(section["want"]) {
				if !strings.Contains(out, line) {
					t.Errorf("missing %q in\n%s", line, out)
				}
			}
			for line := range expectations(section["absent"]) {
				if strings.Contains(out, line) {
					t.Errorf("%q should not be in\n%s", line, out)
				}
			}
		})
	}
}

// expectations are the lines of a section, comments and blank lines aside.
func expectations(section string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for line := range strings.Lines(section) {
			if line = strings.TrimRight(line, "\n"); line != "" && !strings.HasPrefix(line, "#") && !yield(line) {
				return
			}
		}
	}
}

func TestReportMedianOfCounts(t *testing.T) {
	results, _ := parse(strings.NewReader("BenchmarkFloor-2 10 100 ns/op\nBenchmarkFloor-2 10 900 ns/op\nBenchmarkFloor-2 10 200 ns/op\n"))
	if got, _ := results[0].median("ns/op"); got != 200 {
		t.Errorf("median = %v, want 200", got)
	}
}
