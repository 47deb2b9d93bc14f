package plan

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites testdata/*.golden: go test ./store/plan -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden from current output")

// tasks names a story's items.
var tasks = Noun{One: "task", Many: "tasks"}

func TestWriteTextGolden(t *testing.T) {
	tests := []struct {
		name        string
		title       string
		noun        Noun
		items       []Item
		maxParallel int
	}{
		{name: "empty", title: "empty-story", noun: tasks},
		{
			name: "all_completed", title: "done-story", noun: tasks,
			items: []Item{done("t1"), done("t2", "t1")},
		},
		{
			// Waves with priorities and "-- after", a split wave, a blocked
			// dependent, a cycle and completed items: every section at once.
			name: "story", title: "auth-login", noun: tasks, maxParallel: 2,
			items: []Item{
				done("t1"),
				{ID: "t2", Subject: "Write schema", Status: "in_progress", Priority: "high", BlockedBy: []string{"t1"}},
				{ID: "t3", Subject: "Add handler", Status: "pending", BlockedBy: []string{"t2"}},
				{ID: "t4", Subject: "Add docs", Status: "pending", Priority: "low"},
				{ID: "t5", Subject: "Lint\nconfig", Status: "pending", Priority: "critical"},
				{ID: "t6", Subject: "Wire routes", Status: "pending", BlockedBy: []string{"t2", "t5", "t1", "ghost"}},
				{ID: "t7", Subject: "Retry loop", Status: "pending", BlockedBy: []string{"t8", "t3"}},
				{ID: "t8", Subject: "Backoff", Status: "pending", BlockedBy: []string{"t7"}},
				{ID: "t9", Subject: "", Status: "pending", BlockedBy: []string{"t8"}},
				done("t10"),
			},
		},
		{
			name: "epic", title: "payments", noun: Noun{One: "story", Many: "stories"}, maxParallel: 5,
			items: []Item{
				{ID: "checkout", Subject: "Checkout flow", Status: "completed"},
				{ID: "refunds", Subject: "Refunds", BlockedBy: []string{"ledger"}},
				{ID: "ledger", Subject: "Ledger", BlockedBy: []string{"checkout"}},
				{ID: "reports", Subject: "Reports", BlockedBy: []string{"ledger", "refunds"}},
				{ID: "invoices", Subject: "Invoices", BlockedBy: []string{"tax"}},
				{ID: "tax", Subject: "Tax rules", BlockedBy: []string{"invoices"}},
			},
		},
		{
			// A broken task is shown apart with its finding, never in a wave,
			// and what it blocks is blocked.
			name: "broken", title: "pay-form", noun: tasks,
			items: []Item{
				it("form"),
				{ID: "submit", Subject: "Submit", Status: "pending", BlockedBy: []string{"api"}},
				{ID: "api", Status: "pending", Broken: ".saga/stories/pay-form/api.json:3:5: expected ',' [json-syntax]"},
			},
		},
		{
			// Stories whose paths overlap: the later in plan order waits
			// for the earlier, a line under it (docs/landing.md#conflicts-foreseen).
			name: "overlap", title: "shop", noun: Noun{One: "story", Many: "stories"},
			items: []Item{
				{ID: "users", Subject: "Users", Paths: []string{"api/users.go", "web/users/"}},
				{ID: "auth", Subject: "Auth", Paths: []string{"api/**"}},
				{ID: "docs", Subject: "Docs", Paths: []string{"docs/**"}},
				{ID: "report", Subject: "Report", BlockedBy: []string{"auth"}, Paths: []string{"api/report.go"}},
			},
		},
		{
			// Default noun and max-parallel, no title.
			name: "defaults", items: []Item{it("a"), it("b", "a")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.items, tc.maxParallel)
			var buf bytes.Buffer
			if err := p.WriteText(&buf, tc.title, tc.noun, tc.items, tc.maxParallel); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("output differs from %s:\n--- got ---\n%s\n--- want ---\n%s", path, buf.Bytes(), want)
			}
		})
	}
}

func TestWaveLabels(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want []string
	}{
		{name: "none", plan: Plan{}, want: []string{}},
		{
			name: "split middle wave",
			plan: Plan{
				Waves:  [][]string{{"a"}, {"b", "c"}, {"d"}, {"e"}},
				WaveOf: map[string]int{"a": 1, "b": 2, "c": 2, "d": 2, "e": 3},
			},
			want: []string{"WAVE 1", "WAVE 2a", "WAVE 2b", "WAVE 3"},
		},
		{
			// A plan decoded from JSON has no WaveOf: number sub-waves in sequence.
			name: "without WaveOf",
			plan: Plan{Waves: [][]string{{"a"}, {"b"}}},
			want: []string{"WAVE 1", "WAVE 2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, "labels", tc.plan.waveLabels(), tc.want)
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTextError(t *testing.T) {
	if err := Compute(nil, 0).WriteText(failWriter{}, "x", tasks, nil, 0); err == nil {
		t.Error("want the writer's error, got nil")
	}
}
