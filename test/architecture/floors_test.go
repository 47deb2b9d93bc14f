package architecture

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The floors of docs/architecture.md's package table, bottom up: a
// package may import one on its own floor or below, never one above.
// Test-only packages and tools ("apart": tests, benchmarks, the release script) stand apart: they may import anything, and
// no package on a floor may import them.
var floorOrder = []string{"base", "model", "protocol", "runs", "faces"}

const apart = "apart"

// TestFloors: every arrow runs down. Each package of the module has a floor
// in the table, and no non-test import goes up a floor (go list's imports,
// so a new import up fails here whatever the imports column says).
func TestFloors(t *testing.T) {
	root := testkit.ModuleRoot(t)
	rows := packageTable(t, filepath.Join(root, "docs", "architecture.md"))
	floor := map[string]string{}
	for _, r := range rows {
		for _, p := range r.packages {
			floor[p] = r.floor
		}
	}
	for _, problem := range arrowsUp(floor, goListImports(t, root)) {
		t.Error(problem)
	}
}

// arrowsUp lists what breaks the floors rule: a package without a known
// floor, and an import of a package on a higher floor or of a test-only
// one from a floor.
func arrowsUp(floor map[string]string, imports map[string][]string) []string {
	level := func(p string) (int, bool) {
		f, ok := floor[p]
		if !ok {
			return 0, false
		}
		if f == apart {
			return len(floorOrder), true
		}
		i := slices.Index(floorOrder, f)
		return i, i >= 0
	}
	var problems []string
	for _, p := range slices.Sorted(maps.Keys(imports)) {
		from, ok := level(p)
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s: no floor (one of %s, or %s) in docs/architecture.md's package table", p, strings.Join(floorOrder, ", "), apart))
			continue
		}
		if floor[p] == apart {
			continue
		}
		for _, imp := range imports[p] {
			to, ok := level(imp)
			if !ok || to <= from {
				continue // an unknown import is reported as a package of its own
			}
			problems = append(problems, fmt.Sprintf("an arrow up: %s (floor %s) imports %s (floor %s); move the code down, or the package up a floor", p, floor[p], imp, floor[imp]))
		}
	}
	return problems
}

// TestArrowsUpRule: the rule itself, on a planted module — an arrow down
// or along a floor passes; an arrow up, an import of a test-only package
// from a floor and a package without a floor each fail.
func TestArrowsUpRule(t *testing.T) {
	floor := map[string]string{
		"cli": "faces", "runs/control": "runs", "runs": "protocol", "store": "model",
		"internal/filesafe": "base", "internal/testkit": apart, "store/jsonc": "base",
	}
	cases := []struct {
		name    string
		imports map[string][]string
		want    []string // substrings, one per problem, in order
	}{
		{"down and along", map[string][]string{
			"cli": {"runs/control", "runs", "store"}, "runs/control": {"runs", "internal/filesafe"},
			"store": {"store/jsonc", "internal/filesafe"}, "store/jsonc": {}, "internal/filesafe": {},
		}, nil},
		{"an arrow up", map[string][]string{
			"internal/filesafe": {"store"}, "store": {},
		}, []string{"an arrow up: internal/filesafe (floor base) imports store (floor model)"}},
		{"protocol imports the run domain", map[string][]string{
			"runs": {"runs/control"}, "runs/control": {},
		}, []string{"runs (floor protocol) imports runs/control (floor runs)"}},
		{"a floor imports a test-only package", map[string][]string{
			"store": {"internal/testkit"}, "internal/testkit": {"store"},
		}, []string{"store (floor model) imports internal/testkit (floor apart)"}},
		{"no floor", map[string][]string{
			"runs/new": {"runs"}, "runs": {},
		}, []string{"package runs/new: no floor"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := arrowsUp(floor, c.imports)
			if len(got) != len(c.want) {
				t.Fatalf("arrowsUp = %q, want %d problems", got, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
