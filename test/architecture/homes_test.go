package architecture

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// homes are concepts with one home each: the one non-test package of the
// module allowed to import each outside package (docs/architecture.md).
var homes = map[string]string{
	// File watching: the workspace service, the live-run watcher, the
	// epic runner, follow and the dashboard's output all watch through it.
	"github.com/fsnotify/fsnotify": "fswatch",
}

// TestOneHome: no package but its home imports what a concept is built on
// (tests may, to observe).
func TestOneHome(t *testing.T) {
	root := testkit.ModuleRoot(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...", "./testdata/standin/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	importers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if _, ok := homes[imp]; ok {
				importers[imp] = append(importers[imp], strings.TrimPrefix(fields[0], module))
			}
		}
	}
	for imp, home := range homes {
		if got := importers[imp]; !slices.Equal(got, []string{home}) {
			t.Errorf("%s is imported by %v; its one home is %s", imp, got, home)
		}
	}
}
