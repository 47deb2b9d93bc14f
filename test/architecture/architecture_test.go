// Package architecture keeps docs/architecture.md true to the code: its
// package table's "imports of ours" column is compared with what `go list`
// says each package imports, and its floor column with the rule that every
// arrow runs down (floors_test.go).
package architecture

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

const module = "github.com/saga-ai/saga-lsp/"

// TestPackageTable: every package of the module has a row in the table
// (a row may name several), and a row's imports column is exactly the
// union of its packages' non-test imports of this module.
func TestPackageTable(t *testing.T) {
	root := testkit.ModuleRoot(t)
	rows := packageTable(t, filepath.Join(root, "docs", "architecture.md"))
	actual := goListImports(t, root)

	listed := map[string]bool{}
	for _, r := range rows {
		var union []string
		for _, p := range r.packages {
			if listed[p] {
				t.Errorf("package %s has more than one row", p)
			}
			listed[p] = true
			imps, ok := actual[p]
			if !ok {
				t.Errorf("the table lists %s, which go list does not know", p)
				continue
			}
			union = append(union, imps...)
		}
		slices.Sort(union)
		union = slices.Compact(union)
		if !slices.Equal(union, r.imports) {
			t.Errorf("row %s: the table says it imports %v; go list says %v", strings.Join(r.packages, ", "), r.imports, union)
		}
	}
	for p := range actual {
		if !listed[p] {
			t.Errorf("package %s has no row in docs/architecture.md's package table", p)
		}
	}
}

type row struct {
	packages []string // as the first column names them
	floor    string   // the floor column (floors_test.go)
	imports  []string // sorted
}

// packageTable reads the table under "## Packages and their direction":
// rows "| `a`, `b` | owns | floor | x, y (a remark) |"; "—" is none.
func packageTable(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages and their direction"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 4 {
			t.Fatalf("%s: a row without four columns: %s", path, line)
		}
		var r row
		for _, p := range strings.Split(cells[0], ",") {
			r.packages = append(r.packages, strings.Trim(strings.TrimSpace(p), "`"))
		}
		r.floor = strings.TrimSpace(cells[len(cells)-2])
		last := strings.TrimSpace(cells[len(cells)-1])
		if i := strings.Index(last, " ("); i >= 0 { // a remark
			last = last[:i]
		}
		if last != "—" {
			for _, p := range strings.Split(last, ",") {
				r.imports = append(r.imports, strings.TrimSpace(p))
			}
		}
		slices.Sort(r.imports)
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no package table under \"## Packages and their direction\"", path)
	}
	return rows
}

// goListImports maps each package of the module (the stand-in programs
// under testdata included) to its non-test imports of the module.
func goListImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...", "./testdata/standin/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		p := strings.TrimPrefix(fields[0], module)
		m[p] = []string{}
		for _, imp := range fields[1:] {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				m[p] = append(m[p], rest)
			}
		}
		slices.Sort(m[p])
	}
	return m
}
