package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// NeedAllVar names the variable that makes a missing prerequisite fail a
// test instead of skipping it: .ci/run sets it, so that CI cannot pass
// without the real editors, the sandbox and the real Claude Code CLI. Its
// own name, not CI=true, which developers' shells may have (README.md,
// make test).
const NeedAllVar = "SAGA_TEST_NEED_ALL"

// Needs is where a test stops for want of something this machine lacks (a
// tool, a harness, an opt-in variable, a capability): why says what is
// missing and how to get it. The test is skipped, or fails when
// SAGA_TEST_NEED_ALL=1. Skips that are about the platform or -short are
// not this: they stay t.Skip, saying why.
func Needs(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv(NeedAllVar) == "1" {
		tb.Fatalf("%s (%s=1: every prerequisite must be here)", why, NeedAllVar)
	}
	tb.Skip(why)
}

// NeedsTool is the path of the program tool on PATH, or Needs it; install
// says how to get it (e.g. "Debian: apt-get install -y graphviz"), or is
// empty.
func NeedsTool(tb testing.TB, tool, install string) string {
	tb.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		why := tool + " is not installed"
		if install != "" {
			why += " (" + install + ")"
		}
		Needs(tb, why)
	}
	return p
}

// HasTool tells whether the program tool is on PATH, for a test that runs
// a part of itself only with it: without it, that part is left out saying
// so, or, when SAGA_TEST_NEED_ALL=1, the test fails (and goes on).
func HasTool(tb testing.TB, tool, install string) bool {
	tb.Helper()
	if _, err := exec.LookPath(tool); err == nil {
		return true
	}
	why := tool + " is not installed"
	if install != "" {
		why += " (" + install + ")"
	}
	if os.Getenv(NeedAllVar) == "1" {
		tb.Errorf("%s (%s=1: every prerequisite must be here)", why, NeedAllVar)
	} else {
		tb.Logf("%s: that part of the test is left out", why)
	}
	return false
}
