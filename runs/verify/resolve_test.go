//go:build unix

package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Which checks count, read with git in real repositories: story s
// committed on main, its worktree .saga/worktrees/s on story/s.

// taskJSON is a task file of id with checks (none when nil) and extra
// members (`"checkTimeout": 7`).
func taskJSON(id string, checks []string, extra string) string {
	s := fmt.Sprintf(`{"id": %q, "subject": "Task %s", "description": "", "status": "pending", "blockedBy": []`, id, id)
	if checks != nil {
		q := make([]string, len(checks))
		for i, c := range checks {
			q[i] = fmt.Sprintf("%q", c)
		}
		s += `, "checks": [` + strings.Join(q, ", ") + `]`
	}
	if extra != "" {
		s += ", " + extra
	}
	return s + "}\n"
}

func taskRel(story, id string) string { return store.TaskFileRel(story, id) }

// storyRepo is a repository whose main holds story s (tasks a, b, none; a
// journal), another story's task, and a first commit without them; wt is
// s's worktree on story/s.
type storyRepo struct {
	root, wt string
	first    string // main's first commit, without the story
	fork     string // main when story/s was made
}

func newStoryRepo(t *testing.T) *storyRepo {
	t.Helper()
	r := &storyRepo{root: realTemp(t)}
	testkit.InitRepo(t, r.root)
	r.first = r.git(t, "rev-parse", "HEAD")
	testkit.WriteFiles(t, r.root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": ""}` + "\n",
		".saga/stories/s/journal.md": "# s\n",
		taskRel("s", "a"):            taskJSON("a", []string{"exit 3"}, `"checkTimeout": 7`),
		taskRel("s", "b"):            taskJSON("b", []string{"true", "false"}, ""),
		taskRel("s", "none"):         taskJSON("none", nil, ""),
		taskRel("other", "x"):        taskJSON("x", []string{"echo other"}, ""),
		".git/info/exclude":          ".saga/worktrees/\n",
	})
	r.commit(t, r.root, "story s")
	r.fork = r.git(t, "rev-parse", "HEAD")
	r.wt = testkit.Worktree(t, r.root, ".saga/worktrees/s", "story/s")
	return r
}

func (r *storyRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	return testkit.Git(t, r.root, args...)
}

// commit commits everything in dir and returns the commit.
func (r *storyRepo) commit(t *testing.T, dir, msg string) string {
	t.Helper()
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "commit", "-q", "-m", msg)
	return testkit.Git(t, dir, "rev-parse", "HEAD")
}

// write writes files in dir and commits them (msg "" leaves them
// uncommitted); it returns the commit.
func (r *storyRepo) write(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	testkit.WriteFiles(t, dir, files)
	if msg == "" {
		return ""
	}
	return r.commit(t, dir, msg)
}

// counted is a task's checks as Resolve reads them.
func counted(from string, timeout float64, commands ...string) TaskChecks {
	return TaskChecks{Commands: commands, TimeoutSeconds: timeout, From: from}
}

func wantManifest(t *testing.T, m *Manifest, err error, story, fork string, want map[string]TaskChecks) {
	t.Helper()
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if m.Story != story || m.ForkPoint != fork {
		t.Errorf("manifest of %q at %s, want %q at %s", m.Story, m.ForkPoint, story, fork)
	}
	if !reflect.DeepEqual(m.Tasks, want) {
		t.Errorf("tasks:\n%+v\nwant:\n%+v", m.Tasks, want)
	}
}

// The checks that count are the fork point's: the worktree's copy, the
// branch's later commits and the base's later commits change nothing; a
// task the branch added is read where its first-parent line added it.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	r := newStoryRepo(t)
	wt := git.Repo{Dir: r.wt}
	atFork := map[string]TaskChecks{
		"a":    counted(r.fork, 7, "exit 3"),
		"b":    counted(r.fork, 600, "true", "false"),
		"none": counted(r.fork, 600),
	}
	m, err := Resolve(ctx, wt, "s", r.fork, nil)
	wantManifest(t, m, err, "s", r.fork, atFork)

	// The agent weakens a's checks in the worktree, then commits it and
	// deletes b.
	weak := map[string]string{taskRel("s", "a"): taskJSON("a", []string{"true"}, "")}
	r.write(t, r.wt, "", weak)
	m, err = Resolve(ctx, wt, "s", r.fork, nil)
	wantManifest(t, m, err, "s", r.fork, atFork)
	r.write(t, r.wt, "the agent weakens a", weak)
	if err := os.Remove(filepath.Join(r.wt, taskRel("s", "b"))); err != nil {
		t.Fatal(err)
	}
	r.commit(t, r.wt, "the agent deletes b")
	m, err = Resolve(ctx, wt, "s", r.fork, nil)
	wantManifest(t, m, err, "s", r.fork, atFork)

	// A person tightens a on main after the fork: the story's fork point
	// still decides.
	r.write(t, r.root, "main moves on", map[string]string{taskRel("s", "a"): taskJSON("a", []string{"exit 9"}, "")})
	m, err = Resolve(ctx, wt, "s", r.fork, nil)
	wantManifest(t, m, err, "s", r.fork, atFork)

	// Tasks the story branch adds: c, then weakened; d in the same commit
	// as c's weakening; e on a side branch merged in (the merge adds it
	// to the first-parent line).
	addC := r.write(t, r.wt, "add c", map[string]string{taskRel("s", "c"): taskJSON("c", []string{"exit 5"}, `"checkTimeout": 2.5`)})
	addD := r.write(t, r.wt, "weaken c, add d", map[string]string{
		taskRel("s", "c"): taskJSON("c", []string{"true"}, ""),
		taskRel("s", "d"): taskJSON("d", []string{"echo d"}, ""),
	})
	testkit.Git(t, r.wt, "checkout", "-q", "-b", "side")
	r.write(t, r.wt, "add e on a side branch", map[string]string{taskRel("s", "e"): taskJSON("e", []string{"echo e"}, "")})
	testkit.Git(t, r.wt, "checkout", "-q", "story/s")
	r.write(t, r.wt, "go on", map[string]string{"code.txt": "x\n"})
	testkit.Git(t, r.wt, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := testkit.Git(t, r.wt, "rev-parse", "HEAD")
	r.write(t, r.wt, "weaken e", map[string]string{taskRel("s", "e"): taskJSON("e", []string{"true"}, "")})
	// f added, deleted, added again weaker: its first addition counts.
	addF := r.write(t, r.wt, "add f", map[string]string{taskRel("s", "f"): taskJSON("f", []string{"exit 6"}, "")})
	if err := os.Remove(filepath.Join(r.wt, taskRel("s", "f"))); err != nil {
		t.Fatal(err)
	}
	r.commit(t, r.wt, "delete f")
	r.write(t, r.wt, "add f again", map[string]string{taskRel("s", "f"): taskJSON("f", []string{"true"}, "")})
	all := map[string]TaskChecks{
		"a": atFork["a"], "b": atFork["b"], "none": atFork["none"],
		"c": counted(addC, 2.5, "exit 5"),
		"d": counted(addD, 600, "echo d"),
		"e": counted(merge, 600, "echo e"),
		"f": counted(addF, 600, "exit 6"),
	}
	m, err = Resolve(ctx, wt, "s", r.fork, nil)
	wantManifest(t, m, err, "s", r.fork, all)

	tests := []struct {
		name string
		only []string
		want []string
	}{
		{name: "nil: all", only: nil, want: []string{"a", "b", "none", "c", "d", "e", "f"}},
		{name: "empty: none", only: []string{}, want: nil},
		{name: "one at the fork, one added", only: []string{"a", "c"}, want: []string{"a", "c"}},
		{name: "an unknown id", only: []string{"zzz"}, want: nil},
		{name: "another story's task", only: []string{"x"}, want: nil},
	}
	for _, tt := range tests {
		t.Run("only "+tt.name, func(t *testing.T) {
			want := map[string]TaskChecks{}
			for _, id := range tt.want {
				want[id] = all[id]
			}
			m, err := Resolve(ctx, wt, "s", r.fork, tt.only)
			wantManifest(t, m, err, "s", r.fork, want)
		})
	}

	// The story as main holds it now: a's tightened checks, read at main.
	mainTip := r.git(t, "rev-parse", "main")
	m, err = Resolve(ctx, git.Repo{Dir: r.root}, "s", mainTip, []string{"a"})
	wantManifest(t, m, err, "s", mainTip, map[string]TaskChecks{"a": counted(mainTip, 600, "exit 9")})
}

func TestResolveErrors(t *testing.T) {
	ctx := context.Background()
	r := newStoryRepo(t)
	wt := git.Repo{Dir: r.wt}
	tests := []struct {
		name, story, fork string
		want              string // in the error; "" none
	}{
		{name: "an invalid story name", story: "../s", fork: r.fork, want: `invalid story name "../s"`},
		{name: "an unknown fork point", story: "s", fork: strings.Repeat("0", 40), want: "read .saga/stories/s/ at 000000000000"},
		{name: "a story without files", story: "later", fork: r.fork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Resolve(ctx, wt, tt.story, tt.fork, nil)
			if tt.want == "" {
				if err != nil || m == nil {
					t.Fatalf("Resolve: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}

	// From the first commit the story branch's line adds a, b and none.
	m, err := Resolve(ctx, wt, "s", r.first, nil)
	wantManifest(t, m, err, "s", r.first, map[string]TaskChecks{
		"a": counted(r.fork, 7, "exit 3"), "b": counted(r.fork, 600, "true", "false"), "none": counted(r.fork, 600),
	})

	// A task file over the size limit is an error, not a task without
	// checks.
	big := r.write(t, r.wt, "a huge task", map[string]string{
		taskRel("s", "huge"): taskJSON("huge", []string{"exit 1"}, `"pad": "`+strings.Repeat("x", filesafe.MaxFileSize)+`"`),
	})
	_, err = Resolve(ctx, wt, "s", r.fork, nil)
	if want := fmt.Sprintf("read .saga/stories/s/huge.json at %s: the file is over 4 MB", Short(big)); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// ForkPoint is the merge-base with the base, or with origin's copy of it
// when that is further along.
func TestForkPoint(t *testing.T) {
	ctx := context.Background()
	r := newStoryRepo(t)
	r.write(t, r.wt, "the agent at work", map[string]string{"code.txt": "x\n"})
	m2 := r.write(t, r.root, "main moves on", map[string]string{"main.txt": "2\n"})
	testkit.BareOrigin(t, r.root)
	m3 := r.write(t, r.root, "pushed by someone else", map[string]string{"main.txt": "3\n"})
	r.git(t, "push", "-q", "origin", "main")
	r.git(t, "reset", "-q", "--hard", m2) // local main is behind origin's
	r.git(t, "branch", "story/t", "origin/main")
	// local-ahead: origin's copy is behind the local one.
	r.git(t, "branch", "local-ahead", "main")
	r.git(t, "push", "-q", "origin", "local-ahead")
	r.git(t, "checkout", "-q", "local-ahead")
	m4 := r.write(t, r.root, "not pushed", map[string]string{"main.txt": "4\n"})
	r.git(t, "checkout", "-q", "main")
	r.git(t, "branch", "story/u", m4)
	r.git(t, "branch", "no-origin", m4)

	tests := []struct {
		name             string
		dir, head, base  string
		want, wantErrHas string
	}{
		{name: "HEAD of the worktree", dir: r.wt, head: "HEAD", base: "main", want: r.fork},
		{name: "head empty is HEAD", dir: r.wt, head: "", base: "main", want: r.fork},
		{name: "a branch named", dir: r.root, head: "story/s", base: "main", want: r.fork},
		// A remote-tracking ref is never preferred on its own: an agent
		// could have moved it (attack 13); the local base's fork counts.
		{name: "origin's base further along does not count", dir: r.root, head: "story/t", base: "main", want: m2},
		{name: "origin's base named", dir: r.root, head: "story/t", base: "origin/main", want: m3},
		{name: "origin's base behind: the local fork", dir: r.root, head: "story/u", base: "local-ahead", want: m4},
		{name: "a base origin has not got", dir: r.root, head: "story/u", base: "no-origin", want: m4},
		{name: "the same fork from both", dir: r.root, head: "story/u", base: "main", want: m2},
		{name: "an unknown base", dir: r.wt, head: "", base: "nope", wantErrHas: "find where HEAD forked from nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ForkPoint(ctx, git.Repo{Dir: tt.dir}, tt.head, tt.base)
			if tt.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Errorf("ForkPoint = %q, %v; want an error with %q", got, err, tt.wantErrHas)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ForkPoint = %q, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestDefaultBranch(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{name: "main", setup: func(t *testing.T, root string) {}, want: "main"},
		{name: "only master", setup: func(t *testing.T, root string) { testkit.Git(t, root, "branch", "-m", "main", "master") }, want: "master"},
		{name: "neither: main all the same", setup: func(t *testing.T, root string) { testkit.Git(t, root, "branch", "-m", "main", "dev") }, want: "main"},
		{name: "init.defaultBranch before main", setup: func(t *testing.T, root string) {
			testkit.Git(t, root, "branch", "trunk")
			testkit.Git(t, root, "config", "init.defaultBranch", "trunk")
		}, want: "trunk"},
		{name: "init.defaultBranch missing", setup: func(t *testing.T, root string) {
			testkit.Git(t, root, "branch", "-m", "main", "master")
			testkit.Git(t, root, "config", "init.defaultBranch", "trunk")
		}, want: "master"},
		{name: "origin's HEAD before all", setup: func(t *testing.T, root string) {
			testkit.BareOrigin(t, root)
			testkit.Git(t, root, "branch", "trunk")
			testkit.Git(t, root, "push", "-q", "origin", "trunk")
			testkit.Git(t, root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
			testkit.Git(t, root, "config", "init.defaultBranch", "main")
		}, want: "trunk"},
		{name: "origin's HEAD without a local branch", setup: func(t *testing.T, root string) {
			testkit.BareOrigin(t, root)
			testkit.Git(t, root, "branch", "trunk")
			testkit.Git(t, root, "push", "-q", "origin", "trunk")
			testkit.Git(t, root, "branch", "-D", "trunk")
			testkit.Git(t, root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
		}, want: "origin/trunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := realTemp(t)
			testkit.InitRepo(t, root)
			tt.setup(t, root)
			if got := DefaultBranch(context.Background(), git.Repo{Dir: root}); got != tt.want {
				t.Errorf("DefaultBranch = %q, want %q", got, tt.want)
			}
		})
	}
}

// EpicBase follows a stacked story's base through the run records of the
// stories whose branches it stacks on, to a branch that is not a story's;
// a missing record, one without a base, or a loop give the default
// branch (main here; the records name develop).
func TestEpicBase(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		records map[string]string // story → its record's base
		want    string
	}{
		{name: "not a story's branch", base: "develop", want: "develop"},
		{name: "the default branch", base: "main", want: "main"},
		{name: "not a story's: story/ alone", base: "story/", want: "story/"},
		{name: "stacked on a blocker", base: "story/first", records: map[string]string{"first": "develop"}, want: "develop"},
		{name: "a chain", base: "story/c", records: map[string]string{"c": "story/b", "b": "story/a", "a": "develop"}, want: "develop"},
		{name: "no record", base: "story/first", want: "main"},
		{name: "a record without a base", base: "story/first", records: map[string]string{"first": ""}, want: "main"},
		{name: "a chain missing a link", base: "story/c", records: map[string]string{"c": "story/b", "a": "develop"}, want: "main"},
		{name: "a loop", base: "story/x", records: map[string]string{"x": "story/y", "y": "story/x"}, want: "main"},
		{name: "a loop onto itself", base: "story/x", records: map[string]string{"x": "story/x"}, want: "main"},
		{name: "a loop further on", base: "story/c", records: map[string]string{"c": "story/x", "x": "story/y", "y": "story/x"}, want: "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := realTemp(t)
			testkit.InitRepo(t, root)
			testkit.Git(t, root, "branch", "develop")
			for story, base := range tt.records {
				if err := runs.WriteRecord(root, runs.Record{Story: story, Status: runs.StatusCompleted, Base: base, Ended: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			if got := EpicBase(context.Background(), git.Repo{Dir: root}, root, tt.base); got != tt.want {
				t.Errorf("EpicBase(%q) = %q, want %q", tt.base, got, tt.want)
			}
		})
	}
}

// Locate: the story's worktree and its fork from the base its last run
// recorded (followed to the epic's base), else the checkout and its fork
// from the default branch.
func TestLocate(t *testing.T) {
	ctx := context.Background()
	r := newStoryRepo(t)
	r.write(t, r.wt, "the agent at work", map[string]string{"code.txt": "x\n"})
	tip := r.write(t, r.root, "main moves on", map[string]string{"main.txt": "2\n"})
	r.git(t, "branch", "develop", r.first)
	record := func(story, base string) {
		t.Helper()
		if err := runs.WriteRecord(r.root, runs.Record{Story: story, Status: runs.StatusCompleted, Base: base}); err != nil {
			t.Fatal(err)
		}
	}

	where, err := Locate(ctx, r.root, "s")
	if want := (Where{Dir: r.wt, Worktree: true, Base: "main", ForkPoint: r.fork}); err != nil || where != want {
		t.Errorf("a worktree, no record: %+v, %v; want %+v", where, err, want)
	}
	record("s", "story/first")
	record("first", "develop")
	where, err = Locate(ctx, r.root, "s")
	if want := (Where{Dir: r.wt, Worktree: true, Base: "develop", ForkPoint: r.first}); err != nil || where != want {
		t.Errorf("a worktree stacked on first: %+v, %v; want %+v", where, err, want)
	}
	// A story without a worktree runs in the checkout, from the default
	// branch whatever its record says.
	record("t", "develop")
	for _, story := range []string{"t", "u"} {
		where, err = Locate(ctx, r.root, story)
		if want := (Where{Dir: r.root, Base: "main", ForkPoint: tip}); err != nil || where != want {
			t.Errorf("story %s without a worktree: %+v, %v; want %+v", story, where, err, want)
		}
	}
	// A base that is not there.
	r.git(t, "branch", "-m", "main", "dev")
	where, err = Locate(ctx, r.root, "t")
	if err == nil || !strings.Contains(err.Error(), "forked from main") || where.Base != "main" || where.ForkPoint != "" {
		t.Errorf("no default branch: %+v, %v", where, err)
	}
}

// WorkingCopy reads a task file that is not committed.
func TestWorkingCopy(t *testing.T) {
	dir := realTemp(t)
	testkit.WriteFiles(t, dir, map[string]string{
		taskRel("s", "a"):    taskJSON("a", []string{"make test"}, `"checkTimeout": 30`),
		taskRel("s", "huge"): taskJSON("huge", []string{"exit 1"}, `"pad": "`+strings.Repeat("x", filesafe.MaxFileSize)+`"`),
	})
	if err := os.Mkdir(filepath.Join(dir, taskRel("s", "dir")), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		task  string
		want  TaskChecks
		found bool
	}{
		{task: "a", want: counted(WorkingTree, 30, "make test"), found: true},
		{task: "missing"},
		{task: "huge"},
		{task: "dir"},
	}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			got, found := WorkingCopy(dir, "s", tt.task)
			if found != tt.found || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("WorkingCopy = %+v, %v; want %+v, %v", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestFromSource(t *testing.T) {
	tests := []struct {
		name, src string
		want      TaskChecks
	}{
		{name: "checks and a timeout", src: `{"checks": ["go test ./...", "go vet ./..."], "checkTimeout": 90}`,
			want: counted("rev", 90, "go test ./...", "go vet ./...")},
		{name: "no checks", src: `{"id": "a"}`, want: counted("rev", 600)},
		{name: "empty checks", src: `{"checks": []}`, want: counted("rev", 600)},
		{name: "blank and non-string entries skipped", src: `{"checks": ["", "  ", 3, null, ["x"], "ok"]}`, want: counted("rev", 600, "ok")},
		{name: "a fractional timeout", src: `{"checks": ["x"], "checkTimeout": 1.5}`, want: counted("rev", 1.5, "x")},
		{name: "the largest timeout", src: `{"checks": ["x"], "checkTimeout": 86400}`, want: counted("rev", 86400, "x")},
		{name: "a zero timeout", src: `{"checks": ["x"], "checkTimeout": 0}`, want: counted("rev", 600, "x")},
		{name: "a negative timeout", src: `{"checks": ["x"], "checkTimeout": -5}`, want: counted("rev", 600, "x")},
		{name: "a timeout over a day", src: `{"checks": ["x"], "checkTimeout": 86401}`, want: counted("rev", 600, "x")},
		{name: "a timeout as a string", src: `{"checks": ["x"], "checkTimeout": "30"}`, want: counted("rev", 600, "x")},
		{name: "checks not a list", src: `{"checks": "make"}`, want: counted("rev", 600)},
		{name: "comments", src: "// a task\n{\"checks\": [/* first */ \"x\"]}", want: counted("rev", 600, "x")},
		{name: "not an object", src: `["x"]`, want: counted("rev", 600)},
		{name: "empty", src: ``, want: counted("rev", 600)},
		{name: "escapes decoded", src: `{"checks": ["echo \"a\tb\" \u00e9 \\"]}`, want: counted("rev", 600, "echo \"a\tb\" é \\")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromSource([]byte(tt.src), "rev"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromSource = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTaskChecksTimeoutAndBudget(t *testing.T) {
	tests := []struct {
		tc      TaskChecks
		timeout time.Duration
		budget  time.Duration
	}{
		{tc: TaskChecks{}, timeout: store.DefaultCheckTimeout, budget: 0},
		{tc: TaskChecks{Commands: []string{"a", "b", "c"}}, timeout: store.DefaultCheckTimeout, budget: 3 * store.DefaultCheckTimeout},
		{tc: TaskChecks{Commands: []string{"a", "b"}, TimeoutSeconds: 1.5}, timeout: 1500 * time.Millisecond, budget: 3 * time.Second},
		{tc: TaskChecks{Commands: []string{"a"}, TimeoutSeconds: -1}, timeout: store.DefaultCheckTimeout, budget: store.DefaultCheckTimeout},
	}
	for _, tt := range tests {
		if got := tt.tc.Timeout(); got != tt.timeout {
			t.Errorf("%+v: Timeout = %s, want %s", tt.tc, got, tt.timeout)
		}
		if got := tt.tc.Budget(); got != tt.budget {
			t.Errorf("%+v: Budget = %s, want %s", tt.tc, got, tt.budget)
		}
	}
}

// A manifest read back is the one written; writing replaces it whole.
func TestManifestRoundTrip(t *testing.T) {
	dir := realTemp(t)
	path := filepath.Join(dir, "session", "checks", "s.json") // folders made as needed
	m := &Manifest{Story: "epic--s", ForkPoint: strings.Repeat("ab", 20), Tasks: map[string]TaskChecks{
		"a":    counted(strings.Repeat("ab", 20), 7.5, "go test ./...", `echo "quoted" | tr a b`),
		"none": counted(strings.Repeat("cd", 20), 600),
		"wt":   counted(WorkingTree, 1, "true"),
	}}
	if err := runs.WriteChecksManifest(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := runs.ReadChecksManifest(path)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("ReadManifest = %+v, %v; want %+v", got, err, m)
	}
	if text := testkit.ReadFile(t, path); !strings.HasSuffix(text, "}\n") || !strings.Contains(text, `"forkPoint": "abab`) {
		t.Errorf("the file:\n%s", text)
	}
	small := &Manifest{Story: "s", ForkPoint: "f", Tasks: map[string]TaskChecks{}}
	if err := runs.WriteChecksManifest(path, small); err != nil {
		t.Fatal(err)
	}
	if got, err := runs.ReadChecksManifest(path); err != nil || !reflect.DeepEqual(got, small) {
		t.Errorf("rewritten: %+v, %v", got, err)
	}
	if des, _ := os.ReadDir(filepath.Dir(path)); len(des) != 1 {
		t.Errorf("the folder holds %d files, want only the manifest (no temp file left)", len(des))
	}

	if _, err := runs.ReadChecksManifest(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing manifest: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	testkit.WriteFiles(t, dir, map[string]string{"bad.json": `{"story": `})
	if _, err := runs.ReadChecksManifest(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("a broken manifest: %v", err)
	}
	if err := runs.WriteChecksManifest(filepath.Join(bad, "under-a-file.json"), m); err == nil {
		t.Error("WriteManifest under a file succeeded")
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{"": "", "abc": "abc", "0123456789ab": "0123456789ab",
		"0123456789abc": "0123456789ab", strings.Repeat("f", 40): strings.Repeat("f", 12)} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}
