package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestRules runs every testdata/rules/*.txtar case: the archive's files form
// a workspace, and its "want" section lists the expected diagnostics, one a
// line, as `<file>:<line>:<col> <code>` with 1-based line and UTF-16 column
// (what `saga-lsp check` prints). Lines starting with # are comments.
func TestRules(t *testing.T) {
	p := workspace.Parser(t)
	testkit.RunArchives(t, "testdata/rules/*.txtar", func(t *testing.T, files map[string]string) {
		files, want := ruleCase(files)
		root := t.TempDir()
		testkit.WriteFiles(t, root, files)
		ws, err := p.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range ws.Diagnostics() {
			if d.Message == "" {
				t.Errorf("%s: empty message for %s", d.File, d.Code)
			}
			if d.Severity != store.SeverityOf(d.Code) {
				t.Errorf("%s: %s has severity %v", d.File, d.Code, d.Severity)
			}
			got = append(got, fmt.Sprintf("%s:%d:%d %s", d.File, d.Range.Start.Line+1, d.Range.Start.Character+1, d.Code))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("diagnostics differ\n got:\n  %s\nwant:\n  %s\nall:\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), dump(ws))
		}
		// The workspace's list is its files' lists (the server publishes
		// the one after a load, the others after edits).
		var perFile []store.Diagnostic
		for _, f := range ws.Files() {
			perFile = append(perFile, ws.FileDiagnostics(f.Rel)...)
		}
		store.SortDiagnostics(perFile)
		if all := ws.Diagnostics(); fmt.Sprint(all) != fmt.Sprint(perFile) {
			t.Errorf("Diagnostics differs from every file's FileDiagnostics\n all: %v\nfiles: %v", all, perFile)
		}
	})
}

func dump(ws *store.Workspace) string {
	var b strings.Builder
	for _, d := range ws.Diagnostics() {
		fmt.Fprintf(&b, "  %s:%d:%d-%d:%d %s %s\n", d.File, d.Range.Start.Line+1, d.Range.Start.Character+1,
			d.Range.End.Line+1, d.Range.End.Character+1, d.Code, d.Message)
	}
	return b.String()
}

// ruleCase splits a rule case's files: the workspace's, but for the one
// named "want", which holds the expectations. A file name ending in ".crlf"
// is written without the suffix and with CRLF line ends.
func ruleCase(files map[string]string) (ws map[string]string, want []string) {
	ws = map[string]string{}
	for name, data := range files {
		switch base, crlf := strings.CutSuffix(name, ".crlf"); {
		case name == "want":
			want = testkit.Expectations(data)
		case crlf:
			ws[base] = strings.ReplaceAll(data, "\n", "\r\n")
		default:
			ws[name] = data
		}
	}
	return ws, want
}

// readCase is the rule case at path (ruleCase).
func readCase(t *testing.T, path string) (map[string][]byte, []string) {
	t.Helper()
	ws, want := ruleCase(testkit.ReadArchive(t, path))
	files := map[string][]byte{}
	for name, data := range ws {
		files[name] = []byte(data)
	}
	return files, want
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadEqualsParse: every file Load reads (into shared chunks, with the
// trees of a jsonc.Batch) is the File that Parse makes of its bytes, and
// its Src ends where its bytes do, so an append cannot reach a neighbour.
func TestLoadEqualsParse(t *testing.T) {
	cases, _ := filepath.Glob("testdata/rules/*.txtar")
	p := workspace.Parser(t)
	root := t.TempDir()
	for i, c := range cases {
		files, _ := readCase(t, c)
		for name, data := range files {
			// One workspace of every case's stories and epics, each under a
			// name of its own, so chunks hold files of many folders.
			name = strings.Replace(name, "stories/", fmt.Sprintf("stories/c%d-", i), 1)
			name = strings.Replace(name, "epics/", fmt.Sprintf("epics/c%d-", i), 1)
			writeFile(t, filepath.Join(root, name), data)
		}
	}
	ws, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range ws.Files() {
		if f.Src == nil {
			continue
		}
		n++
		disk, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Rel)))
		if err != nil {
			t.Fatal(err)
		}
		if cap(f.Src) != len(f.Src) {
			t.Errorf("%s: Src has room for %d more bytes", f.Rel, cap(f.Src)-len(f.Src))
		}
		want := p.Parse(f.Rel, disk, -1)
		// Compared before either's line index is made (on first use).
		if !sameValue(f, want) {
			t.Errorf("%s: loaded file differs from Parse's", f.Rel)
		}
		if f.Doc != nil && f.Doc.Lines().LineCount() != want.Doc.Lines().LineCount() {
			t.Errorf("%s: line counts differ", f.Rel)
		}
	}
	if n < 50 {
		t.Fatalf("only %d files loaded", n)
	}
}
