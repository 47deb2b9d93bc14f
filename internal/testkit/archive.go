package testkit

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// RunArchives runs run as a subtest for each txtar archive the glob pattern
// matches, named after its file without .txtar, with the archive's files by
// name. No archive fails the test.
func RunArchives(t *testing.T, pattern string, run func(t *testing.T, files map[string]string)) {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no %s: %v", pattern, err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) { run(t, ReadArchive(t, p)) })
	}
}

// ReadArchive is the files of the txtar archive at path, by name.
func ReadArchive(tb testing.TB, path string) map[string]string {
	tb.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range a.Files {
		files[f.Name] = string(f.Data)
	}
	return files
}

// Expectations are the lines of an archive's file of expectations, without
// their trailing white space; blank lines and # comments left out.
func Expectations(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if line = strings.TrimRight(line, " \t\r\n"); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}
