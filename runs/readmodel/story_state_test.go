package readmodel

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// A worker holds its story's lock a moment past its worker.end: the
// story is its run's end from then on, not running — as the live watcher
// judges it (watch.State.Alive) — while a lock held by another process
// (a new worker, reset) still is.
func TestEndedRunsLockDoesNotRun(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "d"}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "d", "status": "pending", "blockedBy": []}` + "\n",
	})
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sessionDir := t.TempDir()
	session := runs.KindSessionName(runs.KindStory, "s", time.Now())
	l, err := runs.OpenLog(runs.OutputFile(sessionDir, session), "s", "", session, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Emit(runs.Event{Event: runs.KindWorkerStart, PID: os.Getpid(), Root: root}, "")
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusFailed, Message: "its checks failed"}, "")
	l.Close()
	lock, ok, err := filesafe.TryLock(root, runs.WorkerLockName("s")) // recorded as this process's: the ended worker's pid
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	defer lock.Unlock()
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ev := NewEvidence(context.Background(), root, sessionDir, p)
	if st := ev.Story(context.Background(), ws, "s"); st.State != runs.StatusFailed {
		t.Errorf("ended run, its worker's lock still held: %s, want failed", st.State)
	}
	// The same lock, the run not ended: running.
	session2 := runs.KindSessionName(runs.KindStory, "s", time.Now().Add(time.Second))
	l2, err := runs.OpenLog(runs.OutputFile(sessionDir, session2), "s", "", session2, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	l2.Emit(runs.Event{Event: runs.KindWorkerStart, PID: os.Getpid(), Root: root}, "")
	l2.Close()
	ev = NewEvidence(context.Background(), root, sessionDir, p)
	if st := ev.Story(context.Background(), ws, "s"); st.State != EpicRunning {
		t.Errorf("a live run holding the lock: %s, want running", st.State)
	}
}
