//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// A definition edited in the story's worktree copy (a person fixing a task
// there) is not reverted silently by the next run: `run` refuses before
// anything starts, naming the file and printing the change to make on the
// base; a new task file there is refused the same way. What runs write
// themselves (a status) is no edit.
func TestRunRefusesDefinitionEditsInTheWorktree(t *testing.T) {
	h := newTmuxEnv(t)
	wt := filepath.Join(h.root, ".saga", "worktrees", story)
	testkit.Git(t, h.root, "worktree", "add", "-q", "-b", runs.StoryBranch(story), wt)
	task := filepath.Join(wt, ".saga", "stories", story, "write-tests.json")
	orig, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(strings.Replace(string(orig), `"status": "pending"`, `"status": "in_progress"`, 1),
		"the form posts to /logout.", "the form posts to /signout.", 1)
	os.WriteFile(task, []byte(edited), 0o644)
	os.WriteFile(filepath.Join(wt, ".saga", "stories", story, "extra.json"), []byte(`{"id": "extra", "subject": "More", "status": "pending", "blockedBy": []}`+"\n"), 0o644)
	r := h.saga(t, nil, "run", story)
	for _, want := range []string{
		"not starting story " + story,
		".saga/worktrees/" + story + "/.saga/stories/" + story + "/write-tests.json was edited in the story's worktree copy, where a run takes the definition from the base and would revert it: make the change on the base instead, in .saga/stories/" + story + "/write-tests.json, and commit it; then `git -C .saga/worktrees/" + story + " checkout story/" + story + " -- .saga/stories/" + story + "/write-tests.json` and run again",
		"\n      +  \"description\": \"Template tests: the header shows Log out for a signed-in user and Log in otherwise; the form posts to /signout.\",",
		".saga/worktrees/" + story + "/.saga/stories/" + story + "/extra.json is new in the story's worktree copy",
	} {
		if r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("run: exit %d, want 1 and %q:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
	if n := len(runs.Runs(h.sessionDir, runs.KindStory, story)); n != 0 {
		t.Errorf("a refused run started a worker (%d runs)", n)
	}
	if data, _ := os.ReadFile(task); string(data) != edited {
		t.Errorf("the edit was reverted:\n%s", data)
	}
	// Only what runs write differs: no refusal for it.
	os.Remove(filepath.Join(wt, ".saga", "stories", story, "extra.json"))
	os.WriteFile(task, []byte(strings.Replace(string(orig), `"status": "pending"`, `"status": "in_progress"`, 1)), 0o644)
	if r := h.saga(t, nil, "run", story); r.Code != 0 {
		t.Errorf("run with a status changed in the copy: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A story whose branch conflicts with its base's tip — the run's
// reference commit, which the worker brings in before any agent runs — is
// refused by `run` before anything starts, naming the files and the merge
// to make.
func TestRunRefusesABranchThatConflictsWithTheBase(t *testing.T) {
	h := newTmuxEnv(t)
	testkit.Git(t, h.root, "checkout", "-q", "-b", runs.StoryBranch(story))
	os.WriteFile(filepath.Join(h.root, "notes.txt"), []byte("the story's\n"), 0o644)
	testkit.Git(t, h.root, "add", "notes.txt")
	testkit.Git(t, h.root, "commit", "-qm", "the story's work")
	testkit.Git(t, h.root, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(h.root, "notes.txt"), []byte("main's\n"), 0o644)
	testkit.Git(t, h.root, "add", "notes.txt")
	testkit.Git(t, h.root, "commit", "-qm", "a fix on main")
	r := h.saga(t, nil, "run", story)
	want := "story/" + story + " conflicts with main in notes.txt: a run takes main in first (its reference commit) and could not. Merge it yourself — `git -C .saga/worktrees/" + story + " merge main`"
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Errorf("run: exit %d, want 1 and %q:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	if n := len(runs.Runs(h.sessionDir, runs.KindStory, story)); n != 0 {
		t.Errorf("a refused run started a worker (%d runs)", n)
	}
}
