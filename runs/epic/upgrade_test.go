//go:build unix

package epic_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// deadPID is above any pid_max: never a live process.
const deadPID = 2147483605

// An epic started by saga-lsp before issue 22 resumes after the upgrade.
// The fixture is the layout that version left when its runner was killed
// after story a completed and while e ran:
//   - a completed on its branch, with its worktree, its run record in
//     <git dir>/saga-lsp/runs/ as that version wrote it (no reference
//     commit, no format version) and its build caches in
//     <git dir>/saga-lsp/cache/;
//   - the session dir was the shared /tmp/saga-sessions (0755; here its
//     sibling of the new default saga-sessions-<uid>), holding the runner's,
//     a's and e's events without a format version or start times.
//
// status still finds the old run; the upgraded runner does not run a
// again, retries e, and b and c build on a's branch and read their checks
// at main's tip (a's record's base), which they record as their reference
// commit; the epic completes, and what the new version writes is versioned.
func TestEpicOfThePreviousVersionResumes(t *testing.T) {
	f := newEpicFixture(t, false)
	tmp := t.TempDir()
	legacy := filepath.Join(tmp, "saga-sessions")
	f.sessionDir = filepath.Join(tmp, "saga-sessions-"+strconv.Itoa(os.Geteuid()))
	for i, kv := range f.env {
		if strings.HasPrefix(kv, runs.EnvSessionDir+"=") {
			f.env[i] = runs.EnvSessionDir + "=" + f.sessionDir
		}
	}
	if runs.LegacySessionDir(f.sessionDir) != legacy {
		t.Fatalf("the legacy dir of %s is %q", f.sessionDir, runs.LegacySessionDir(f.sessionDir))
	}
	if err := os.Mkdir(legacy, 0o755); err != nil { // as MkdirAll made it
		t.Fatal(err)
	}

	main := testkit.Git(t, f.root, "rev-parse", "main")
	wt := testkit.Worktree(t, f.root, ".saga/worktrees/shop--a", "story/shop--a")
	testkit.WriteFiles(t, wt, map[string]string{
		"a.txt":                         "a's work\n",
		".saga/stories/shop--a/a1.json": strings.Replace(task("a1"), `"pending"`, `"completed"`, 1),
		".saga/stories/shop--a/a2.json": strings.Replace(task("a2", "a1"), `"pending"`, `"completed"`, 1),
	})
	testkit.Git(t, wt, "add", "-A")
	testkit.Git(t, wt, "commit", "-qm", "saga(shop--a): run 1 — completed a1, a2")

	// The old version's files, byte for byte as it wrote them.
	t0 := time.Now().Add(-time.Hour).UTC()
	at := func(d time.Duration) string { return strconv.Quote(t0.Add(d).Format(time.RFC3339Nano)) }
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	epicSession, aSession, eSession := "saga-epic-shop-"+ms(0), "saga-story-shop--a-"+ms(time.Second), "saga-story-shop--e-"+ms(2*time.Second)
	git := filepath.Join(f.root, ".git")
	testkit.WriteFiles(t, git, map[string]string{
		"info/exclude": ".saga/worktrees/\n",
		"saga-lsp/runs/shop--a.json": fmt.Sprintf(`{
  "story": "shop--a",
  "session": %q,
  "status": "completed",
  "exitCode": 0,
  "ended": %s,
  "branch": "story/shop--a",
  "base": "main"
}
`, aSession, at(29*time.Second)),
		"saga-lsp/cache/shop--a/go-build/README": "Go's build cache of the old layout\n",
	})
	write := func(session string, lines ...string) {
		path := runs.EventsFile(runs.OutputFile(legacy, session))
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(runs.OutputFile(legacy, session), []byte("the old version's log\n"), 0o644)
	}
	write(epicSession,
		fmt.Sprintf(`{"time":%s,"epic":"shop","session":%q,"event":"epic.start","outputFile":%q,"pid":%d,"maxParallel":2,"after":"ready"}`, at(0), epicSession, runs.OutputFile(legacy, epicSession), deadPID),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","epic":"shop","session":%q,"event":"story.start","base":"main"}`, at(time.Second), aSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","epic":"shop","session":%q,"event":"story.end","status":"completed"}`, at(30*time.Second), epicSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--e","epic":"shop","session":%q,"event":"story.start","base":"main"}`, at(2*time.Second), eSession))
	write(aSession,
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"worker.start","outputFile":%q,"pid":%d,"bash":"sandboxed"}`, at(time.Second), aSession, runs.OutputFile(legacy, aSession), deadPID-1),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"step","step":"lock","message":"holding the worker lock for shop--a"}`, at(time.Second), aSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"step","step":"worktree","branch":"story/shop--a","base":"main","worktree":%q}`, at(2*time.Second), aSession, wt),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"run.start","cycle":1,"pid":%d}`, at(3*time.Second), aSession, deadPID-2),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"run.end","cycle":1,"exitCode":0,"done":2,"total":2,"cost":0.25}`, at(20*time.Second), aSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","session":%q,"event":"worker.end","status":"completed","exitCode":0,"cycles":1,"elapsedMs":28000,"done":2,"total":2,"cost":0.25}`, at(29*time.Second), aSession))
	write(eSession,
		fmt.Sprintf(`{"time":%s,"story":"shop--e","session":%q,"event":"worker.start","outputFile":%q,"pid":%d,"bash":"sandboxed"}`, at(2*time.Second), eSession, runs.OutputFile(legacy, eSession), deadPID-3),
		fmt.Sprintf(`{"time":%s,"story":"shop--e","session":%q,"event":"step","step":"lock","message":"holding the worker lock for shop--e"}`, at(2*time.Second), eSession))

	// Before the resume, status finds the old run: its runner died, a
	// completed in its session.
	st := f.status()
	if st.Session != epicSession || st.State != "died" || st.PID != deadPID {
		t.Errorf("status of the old run: session %q state %q pid %d, want %s died %d", st.Session, st.State, st.PID, epicSession, deadPID)
	}
	if a := storyState(st, "shop--a"); a.State != runs.StatusCompleted || a.Session != aSession || a.Cost != 0.25 {
		t.Errorf("a before the resume: %+v", a)
	}

	// The resume.
	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	st = f.status()
	if st.Done != 5 || st.State != runs.StatusCompleted || st.Session == epicSession {
		t.Fatalf("after the upgrade: %+v", st)
	}
	evs := f.events()
	if n := count(evs, runs.KindStoryStart, "shop--a"); n != 0 {
		t.Errorf("a ran again (%d) though the old record says it completed", n)
	}
	if n := count(evs, runs.KindStoryStart, "shop--e"); n != 1 {
		t.Errorf("e, killed with the old runner, started %d times, want 1", n)
	}
	if rs := runs.Runs(f.sessionDir, runs.KindStory, "shop--a"); len(rs) != 1 || filepath.Dir(rs[0].EventsFile) != legacy {
		t.Errorf("a's runs: %+v, want the old version's only", rs)
	}
	for _, s := range []string{"shop--b", "shop--c"} {
		rec, ok := runs.ReadRecord(f.root, s)
		if !ok || rec.Status != runs.StatusCompleted || rec.Reference != main || rec.Base != "story/shop--a" || rec.Version != runs.FormatVersion {
			t.Errorf("%s's record %+v: want completed on story/shop--a with reference %s, version %d", s, rec, main, runs.FormatVersion)
		}
		if files := testkit.Git(t, f.root, "ls-tree", "-r", "--name-only", "story/"+s); !strings.Contains(files, "a.txt") {
			t.Errorf("story/%s does not build on a's work:\n%s", s, files)
		}
	}
	// What the new version wrote carries the format version; the old
	// record reads as it is.
	if !slices.ContainsFunc(evs, func(e runs.Event) bool { return e.Event == runs.KindEpicStart && e.Version == runs.FormatVersion }) {
		t.Error("the new epic.start carries no format version")
	}
	if rec, ok := runs.ReadRecord(f.root, "shop--a"); !ok || rec.Version != 0 || rec.Status != runs.StatusCompleted {
		t.Errorf("a's old record: %+v %v", rec, ok)
	}
	if fi, err := os.Stat(f.sessionDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the new session dir: %v %v", fi.Mode(), err)
	}
}
