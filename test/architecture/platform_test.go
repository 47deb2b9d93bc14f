package architecture

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// systemPackages are the imports that tie a file to an operating system.
var systemPackages = []string{"syscall", "golang.org/x/sys/unix", "golang.org/x/sys/windows"}

// osSuffixes are the file-name endings of OS-specific files
// (docs/platforms.md#where-os-specific-code-lives).
var osSuffixes = []string{"_linux", "_darwin", "_windows", "_unix"}

// TestSystemCallsInTaggedFiles: a file of the module that imports syscall
// or golang.org/x/sys is an OS-specific one — named *_linux.go,
// *_darwin.go, *_windows.go or *_unix.go (that last with a //go:build line
// naming unix, which Go does not infer from the name) — so that every
// other file builds everywhere and each OS's code has its portable
// counterpart beside it. A test file may instead be kept off Windows by
// its //go:build line. Programs under testdata/ (test stand-ins, never
// built by `go build ./...`) are not the product's and are not checked.
func TestSystemCallsInTaggedFiles(t *testing.T) {
	root := testkit.ModuleRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		if why := platformProblem(t, path, name); why != "" {
			t.Errorf("%s: %s", rel, why)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d Go files under %s", checked, root)
	}
}

// platformProblem says what is wrong with the Go file at path (its base
// name) by the rule above, "" when nothing is.
func platformProblem(t *testing.T, path, name string) string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var uses string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, s := range systemPackages {
			if p == s {
				uses = p
			}
		}
	}
	if uses == "" {
		return ""
	}
	var expr constraint.Expr
	for _, c := range f.Comments {
		for _, l := range c.List {
			if constraint.IsGoBuild(l.Text) {
				expr, _ = constraint.Parse(l.Text)
			}
		}
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	for _, s := range osSuffixes {
		if strings.HasSuffix(stem, s) {
			if s == "_unix" && (expr == nil || !strings.Contains(expr.String(), "unix")) {
				return "a *_unix.go file needs a //go:build line naming unix"
			}
			return ""
		}
	}
	if strings.HasSuffix(name, "_test.go") && expr != nil && !expr.Eval(windowsTags) {
		return ""
	}
	return "imports " + uses + " but is not an OS-specific file: move that code into a *_linux.go, *_darwin.go, *_windows.go or *_unix.go file with a portable counterpart (docs/platforms.md#where-os-specific-code-lives)"
}

// windowsTags are the build tags true when building for Windows, with or
// without -tags portable.
func windowsTags(tag string) bool {
	return tag == "windows" || tag == "portable" || tag == "amd64" || tag == "arm64" || tag == "gc" || strings.HasPrefix(tag, "go1.")
}
