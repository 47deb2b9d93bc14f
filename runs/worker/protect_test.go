//go:build unix

package worker_test

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// Issue 23 in worker runs, with the stand-in agent's scripted Bash: the
// tests that count are the reference commit's, a story that changes them
// ends blocked with its PR a draft, and the definitions on the branch are
// the person's.

// protStory commits, on main, calc.py (wrong), its check tests/check.sh (a
// protected file) and story prot whose task fix runs it; the agent runs
// commands first thing in each run.
func (f *fixture) protStory(commands ...string) {
	f.t.Helper()
	testkit.WriteFiles(f.t, f.root, map[string]string{
		"calc.py":        "def add(a, b):\n    return a - b\n",
		"tests/check.sh": "grep -q 'a + b' calc.py\n",
	})
	f.addStory("prot", map[string]string{
		"fix": `{"id": "fix", "subject": "Fix add", "description": "Make add add.", "status": "pending", "blockedBy": [], "checks": ["sh tests/check.sh"]}`,
	})
	f.agentBash("prot", commands...)
	f.git("push", "-q", "origin", "main")
}

// An agent that edits the protected check script to pass, leaving the code
// wrong, is refused: the check fails with the fork point's script, the
// refusal says so, the task never completes and the PR stays a draft.
func TestProtectedTestEditedToPassRefused(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, true)
	f.protStory(`printf 'exit 0\n' > tests/check.sh`)
	code, out := f.run("prot", "all", func(o *worker.Options) { o.MaxCycles = 2 })
	if code == runs.ExitCompleted {
		t.Fatalf("the weakened story completed:\n%s", out)
	}
	if st := f.worktreeStatuses("prot"); st["fix"] == "completed" {
		t.Errorf("statuses %v", st)
	}
	var protectedRun bool
	for _, e := range f.checkEvents() {
		if !*e.Passed && strings.HasPrefix(e.Message, verify.ProtectedRun) {
			protectedRun = true
		}
	}
	if !protectedRun {
		t.Errorf("no check failed with the fork point's protected files: %+v\n%s", f.checkEvents(), out)
	}
	if prs := f.ghPRs(); len(prs) != 1 || prs[0]["isDraft"] != true {
		t.Errorf("PR %v", prs)
	}
}

// An agent that fixes the code but also changes the protected script
// passes the gate, yet the story ends blocked: the PR stays a draft and its
// description lists the file, the log and the journal name it and the next
// step, the run's events carry it. A weakened task JSON already on the
// branch is put back to the reference commit's before the end's commit.
func TestProtectedFileChangedBlocksThePR(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, true)
	f.protStory(`sed -i 's/a - b/a + b/' calc.py`, `echo '# tidied' >> tests/check.sh`)
	main := f.git("rev-parse", "main")
	// A weakened check committed on the story branch (an earlier version's
	// agent, a person, a blocker's merge).
	f.git("branch", "story/prot", "main")
	wt := testkit.Worktree(t, f.root, ".saga/worktrees/prot-tmp", "tmp")
	f.gitIn(wt, "checkout", "-q", "story/prot")
	testkit.WriteFiles(t, wt, map[string]string{".saga/stories/prot/fix.json": `{"id": "fix", "subject": "Fix add", "description": "Make add add.", "status": "pending", "blockedBy": [], "checks": ["true"]}` + "\n"})
	f.gitIn(wt, "commit", "-qam", "weaken")
	f.git("worktree", "remove", "--force", wt)

	code, out := f.run("prot", "all", nil)
	if code != runs.ExitBlocked {
		t.Fatalf("exit %d, want %d (blocked)\n%s", code, runs.ExitBlocked, out)
	}
	if end := lastEnd(f.events()); end.Status != runs.StatusBlocked {
		t.Errorf("worker.end %+v", end)
	}
	if !strings.Contains(out, "protected files changed: tests/check.sh (modified)") || !strings.Contains(out, `Allow it with "mayChangeTests" on task fix`) {
		t.Errorf("the log does not name the file and the next step:\n%s", out)
	}
	if j := f.journal("prot"); !strings.Contains(j, "protected files changed: tests/check.sh") {
		t.Errorf("journal:\n%s", j)
	}
	prs := f.ghPRs()
	if len(prs) != 1 || prs[0]["isDraft"] != true {
		t.Fatalf("PR %v", prs)
	}
	if body, _ := prs[0]["body"].(string); !strings.Contains(body, "- `tests/check.sh` modified — protected") || !strings.Contains(body, "✓ passed ("+verify.ProtectedRun+")") {
		t.Errorf("the PR's description does not list the protected file:\n%s", body)
	}
	run := runs.ReadRun(runs.EventsFile(f.out))
	if b := run.ProtectedBlocking(); len(b) != 1 || b[0].Path != "tests/check.sh" || b[0].Change != verify.Modified {
		t.Errorf("the run's protected files: %+v", run.Protected)
	}
	st := testkit.Run(t, f.root, nil, "", f.sagaLSP, "status", "prot")
	if !strings.Contains(st.Stdout, "protected files changed: tests/check.sh (modified)") || !strings.Contains(st.Stdout, "branch:   story/prot") ||
		!strings.Contains(st.Stdout, "worktree: .saga/worktrees/prot\n") || !strings.Contains(st.Stdout, "PR:       "+prs[0]["url"].(string)) {
		t.Errorf("status:\n%s%s", st.Stdout, st.Stderr)
	}
	// Definitions on the branch are the person's: the task file equals
	// main's but for its status, and the restoration is reported.
	got := f.git("show", "story/prot:.saga/stories/prot/fix.json")
	want := strings.Replace(f.git("show", main+":.saga/stories/prot/fix.json"), `"status": "pending"`, `"status": "completed"`, 1)
	if got != want {
		t.Errorf("the branch's task file:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(out, "restored definition files to their version at the reference commit") || !strings.Contains(out, ".saga/stories/prot/fix.json") {
		t.Errorf("the restoration is not reported:\n%s", out)
	}
}
