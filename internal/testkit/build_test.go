package testkit

import (
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
