package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildRecordsNoCommit: the programs tests build carry no VCS stamp,
// even where Go's settings ask for one (GOFLAGS=-buildvcs=true here, as
// Go's default -buildvcs=auto gives in a fresh clone), so that what they
// report (--version "unknown", no release) does not depend on the machine
// (issue 33 point 10).
func TestBuildRecordsNoCommit(t *testing.T) {
	dir := t.TempDir()
	WriteFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/stamp\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
	})
	InitRepo(t, dir)
	t.Setenv("GOFLAGS", "-buildvcs=true")
	out := filepath.Join(t.TempDir(), "stamp")
	if err := goBuild(dir, ".", out); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("go", "version", "-m", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	if strings.Contains(string(info), "vcs.") || strings.Contains(string(info), "v0.0.0-") {
		t.Fatalf("the test build recorded the commit it was built from:\n%s", info)
	}
}

// TestBuildsShared: with BuildsVar set, a second process's build of the
// same source is the program the first published (one link per run), and
// a build after the source changed is a new program printing the new
// text, the one already handed out left as it was.
func TestBuildsShared(t *testing.T) {
	dir := t.TempDir()
	src := func(text string) {
		WriteFiles(t, dir, map[string]string{
			"go.mod":  "module example.com/shared\n\ngo 1.22\n",
			"main.go": "package main\n\nfunc main() { println(\"" + text + "\") }\n",
		})
	}
	src("one")
	t.Setenv(BuildsVar, t.TempDir())
	run := func(bin string) string {
		t.Helper()
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	build := func() string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "sub", "shared")
		if err := goBuild(dir, ".", out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first, second := build(), build()
	f1, err1 := os.Stat(first)
	f2, err2 := os.Stat(second)
	if err1 != nil || err2 != nil || !os.SameFile(f1, f2) {
		t.Errorf("the second build is not the published program: %v %v", err1, err2)
	}
	src("two")
	third := build()
	if got := run(third); got != "two" {
		t.Errorf("a build after the change prints %q, want two", got)
	}
	if got := run(first); got != "one" {
		t.Errorf("the program handed out before the change prints %q, want one", got)
	}
	if got := run(build()); got != "two" {
		t.Errorf("the build after that prints %q, want two", got)
	}
}
