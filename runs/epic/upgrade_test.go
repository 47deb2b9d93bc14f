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
	"github.com/saga-ai/saga-lsp/store"
)

// deadPID is above any pid_max: never a live process.
const deadPID = 2147483605

// An epic started by the previous release resumes after the upgrade. Its
// layout: the session dir was /tmp/saga-sessions (shared, 0755), events
// and run records carried no format version. Here: the epic runner was
// killed after story a completed (its branch, its record, its events) and
// while e ran. The new release's default dir is saga-sessions-<uid> beside
// the old one; status still finds the old run, and `run` resumes it: a is
// not run again, e is retried, b and c stack on a's branch.
func TestEpicOfPreviousReleaseResumes(t *testing.T) {
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

	// Story a's branch: its tasks completed, its work committed.
	testkit.Git(t, f.root, "checkout", "-q", "-b", "story/shop--a")
	testkit.WriteFiles(t, f.root, map[string]string{
		".saga/stories/shop--a/a1.json": strings.Replace(task("a1"), `"pending"`, `"completed"`, 1),
		".saga/stories/shop--a/a2.json": strings.Replace(task("a2", "a1"), `"pending"`, `"completed"`, 1),
		"saga-work/a1.md":               "a1\n",
		"saga-work/a2.md":               "a2\n",
	})
	testkit.Git(t, f.root, "add", "-A")
	testkit.Git(t, f.root, "commit", "-q", "-m", "saga(shop--a): a1, a2 completed")
	testkit.Git(t, f.root, "checkout", "-q", "main")

	// The old release's files, byte for byte as it wrote them: no
	// "version", no "procStart".
	t0 := time.Now().Add(-time.Hour).UTC()
	at := func(d time.Duration) string { return strconv.Quote(t0.Add(d).Format(time.RFC3339Nano)) }
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	epicSession, aSession, eSession := "saga-epic-shop-"+ms(0), "saga-story-shop--a-"+ms(time.Second), "saga-story-shop--e-"+ms(2*time.Second)
	write := func(session string, lines ...string) {
		path := runs.EventsFile(runs.OutputFile(legacy, session))
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(runs.OutputFile(legacy, session), []byte("the old release's log\n"), 0o644)
	}
	write(epicSession,
		fmt.Sprintf(`{"time":%s,"epic":"shop","session":%q,"event":"epic.start","outputFile":%q,"pid":%d,"maxParallel":2,"after":"ready"}`, at(0), epicSession, runs.OutputFile(legacy, epicSession), deadPID),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","epic":"shop","session":%q,"event":"story.start","base":"main"}`, at(time.Second), aSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--a","epic":"shop","session":%q,"event":"story.end","status":"completed"}`, at(30*time.Second), epicSession),
		fmt.Sprintf(`{"time":%s,"story":"shop--e","epic":"shop","session":%q,"event":"story.start","base":"main"}`, at(2*time.Second), eSession))
	wt := filepath.Join(f.root, ".saga", "worktrees", "shop--a")
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
	locks, err := store.LockDir(f.root)
	if err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(filepath.Dir(locks), "runs")
	os.MkdirAll(records, 0o755)
	record := fmt.Sprintf("{\n  \"story\": \"shop--a\",\n  \"session\": %q,\n  \"status\": \"completed\",\n  \"exitCode\": 0,\n  \"ended\": %s,\n  \"branch\": \"story/shop--a\",\n  \"base\": \"main\",\n  \"cost\": 0.25\n}\n",
		aSession, at(29*time.Second))
	if err := os.WriteFile(filepath.Join(records, "shop--a.json"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}

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
		t.Fatalf("after the resume: %+v", st)
	}
	evs := f.events()
	if n := count(evs, runs.KindStoryStart, "shop--a"); n != 0 {
		t.Errorf("a started again (%d times) though the old release completed it", n)
	}
	if n := count(evs, runs.KindStoryStart, "shop--e"); n != 1 {
		t.Errorf("e, killed with the old runner, started %d times, want 1", n)
	}
	if rs := runs.Runs(f.sessionDir, runs.KindStory, "shop--a"); len(rs) != 1 || filepath.Dir(rs[0].EventsFile) != legacy {
		t.Errorf("a's runs: %+v, want the old release's only", rs)
	}
	if files := testkit.Git(t, f.root, "ls-tree", "-r", "--name-only", "story/shop--b"); !strings.Contains(files, "saga-work/a1.md") {
		t.Errorf("b did not build on a's branch:\n%s", files)
	}
	// What the new release wrote carries the format version; the old
	// record is read as it is.
	if !slices.ContainsFunc(evs, func(e runs.Event) bool { return e.Event == runs.KindEpicStart && e.Version == runs.FormatVersion }) {
		t.Error("the new epic.start carries no format version")
	}
	if rec, ok := runs.ReadRecord(f.root, "shop--b"); !ok || rec.Version != runs.FormatVersion {
		t.Errorf("b's record: %+v %v", rec, ok)
	}
	if rec, ok := runs.ReadRecord(f.root, "shop--a"); !ok || rec.Version != 0 || rec.Status != runs.StatusCompleted {
		t.Errorf("a's old record: %+v %v", rec, ok)
	}
	if fi, err := os.Stat(f.sessionDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the new session dir: %v %v", fi.Mode(), err)
	}
}
