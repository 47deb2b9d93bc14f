package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// constructionSites are the run backends and the one non-test file each is
// built in (docs/architecture.md#one-setup-per-root): a call of the
// constructor, or a composite literal of the type ("{}"). Every face takes
// them from the root's control.Setup, which runs/github.NewSetup builds once
// per process, instead of building its own.
var constructionSites = map[string]string{
	// GitHub's state of the stories run on Actions: one per Setup.
	"runs/github.NewRuns": "runs/github/state.go",
	"runs/github.Runs{}":  "runs/github/state.go",
	// tmux, found once per Setup (and looked for again only while missing).
	"runs/control.FindTmux": "runs/control/setup.go",
	// The backends that start a story's worker: the epic runner's default
	// and the one the CLI chooses for --on github.
	"runs/control.TmuxBackend{}": "runs/epic/runner.go",
	"runs/github.Backend{}":      "cli/epic_runner.go",
}

// TestOneConstructionSite: each backend is built in one place; a second
// site (a face building its own) fails, and so does none (moved or renamed:
// update the table).
func TestOneConstructionSite(t *testing.T) {
	sites := callSites(t)
	for c, want := range constructionSites {
		if got := sites[c]; !slices.Equal(got, []string{want}) {
			t.Errorf("%s is built in %v; its one construction site is %s (take it from the root's control.Setup)", c, got, want)
		}
	}
}

// TestOneCheckSequence: a task's checks are run one way — resolve →
// protect → run → report (docs/architecture.md#verified-completion) —
// by verify.Prepare and its Checks, which the hook, the worker, `verify`
// and `restack` call (a restacked story's final checks run again on the
// rebuilt branch, where no worker runs: runs/control's restack.go); inside runs/verify the runner is built and a task run
// from that sequence alone (check.go). A second sequence fails.
func TestOneCheckSequence(t *testing.T) {
	sites := callSites(t)
	for c, want := range map[string][]string{
		"runs/verify.newRunner": {"runs/verify/check.go"},
		"runs/verify.runTask":   {"runs/verify/check.go"},
		"runs/verify.Prepare":   {"cli/verify.go", "hook/gate/gate.go", "runs/control/restack.go", "runs/worker/checks.go"},
	} {
		got := slices.Sorted(slices.Values(sites[c]))
		if !slices.Equal(got, want) {
			t.Errorf("%s is called in %v; want %v — the one sequence that runs a task's checks", c, got, want)
		}
	}
}

// callSites lists, for each function called or type built by composite
// literal (constructions), the non-test files of the module that do it.
func callSites(t *testing.T) map[string][]string {
	t.Helper()
	root := testkit.ModuleRoot(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./...", "./testdata/standin/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sites := map[string][]string{}
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || fields[2] == "" {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		for _, name := range strings.Fields(fields[2]) {
			path := filepath.Join(fields[1], name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			rel := filepath.ToSlash(strings.TrimPrefix(filepath.Join(pkg, name), "/"))
			for _, c := range constructions(f, pkg) {
				if !slices.Contains(sites[c], rel) {
					sites[c] = append(sites[c], rel)
				}
			}
		}
	}
	return sites
}

// constructions lists what f calls ("pkg.Func") and builds by composite
// literal ("pkg.Type{}"), each named by its package's path in the module;
// `var _ I = T{}` (an assertion that T implements I) builds nothing.
func constructions(f *ast.File, pkg string) []string {
	imports := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = strings.TrimPrefix(p, module)
	}
	name := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return pkg + "." + e.Name
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
				return imports[x.Name] + "." + e.Sel.Name
			}
		}
		return ""
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			if len(n.Names) == 1 && n.Names[0].Name == "_" {
				return false
			}
		case *ast.CallExpr:
			if s := name(n.Fun); s != "" {
				out = append(out, s)
			}
		case *ast.CompositeLit:
			if s := name(n.Type); s != "" {
				out = append(out, s+"{}")
			}
		}
		return true
	})
	return out
}
