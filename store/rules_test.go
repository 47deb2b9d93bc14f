package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestRules runs every testdata/rules/*.txtar case: the archive's files form
// a workspace, and its "want" section lists the expected diagnostics, one a
// line, as `<file>:<line>:<col> <code>` with 1-based line and UTF-16 column
// (what `saga-lsp check` prints). Lines starting with # are comments.
func TestRules(t *testing.T) {
	cases, err := filepath.Glob("testdata/rules/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no rule cases found: %v", err)
	}
	p := workspace.Parser(t)
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			files, want := readCase(t, c)
			root := t.TempDir()
			for name, data := range files {
				writeFile(t, filepath.Join(root, name), data)
			}
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
		})
	}
}

func dump(ws *store.Workspace) string {
	var b strings.Builder
	for _, d := range ws.Diagnostics() {
		fmt.Fprintf(&b, "  %s:%d:%d-%d:%d %s %s\n", d.File, d.Range.Start.Line+1, d.Range.Start.Character+1,
			d.Range.End.Line+1, d.Range.End.Character+1, d.Code, d.Message)
	}
	return b.String()
}

// readCase parses a txtar archive: "-- name --" lines start files; the file
// named "want" holds the expectations. A file name ending in ".crlf" is
// written without the suffix and with CRLF line ends.
func readCase(t *testing.T, path string) (map[string][]byte, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var name string
	var want []string
	for line := range strings.SplitAfterSeq(string(data), "\n") {
		trim := strings.TrimRight(line, "\n")
		if n, ok := strings.CutPrefix(trim, "-- "); ok && strings.HasSuffix(n, " --") {
			name = strings.TrimSuffix(n, " --")
			if name != "want" {
				files[name] = files[name][:0:0]
			}
			continue
		}
		switch {
		case name == "":
			// comment before the first file
		case name == "want":
			if trim = strings.TrimSpace(trim); trim != "" && !strings.HasPrefix(trim, "#") {
				want = append(want, trim)
			}
		default:
			files[name] = append(files[name], line...)
		}
	}
	for n, d := range files {
		if base, ok := strings.CutSuffix(n, ".crlf"); ok {
			delete(files, n)
			files[base] = []byte(strings.ReplaceAll(string(d), "\n", "\r\n"))
		}
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
