//go:build linux

package workspace_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
)

// TestFunnelReadsAgainAfterLostEvents: when the system's queue of file
// events overflows, the events lost are changes the snapshot never hears
// of; the service reads .saga again whole, so a task completed while the
// queue was full is seen completed — the language server and the
// dashboard do not stay behind the disk until the file changes again.
// The queue is made to overflow for real: the funnel is held while more
// writes than the kernel keeps (max_queued_events) are made.
func TestFunnelReadsAgainAfterLostEvents(t *testing.T) {
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		limit, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	root := testkit.CopyExample(t, "workspace")
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	var logged testkit.LogBuffer
	var hold atomic.Bool
	held, release := make(chan struct{}, 1), make(chan struct{})
	changes := make(chan workspace.Change, 1024)
	s := workspace.Open(root, workspace.Options{Parser: p, Watch: true, Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Changed: func(c workspace.Change, _ []string) {
			if hold.Swap(false) {
				held <- struct{}{}
				<-release
			}
			select {
			case changes <- c:
			default:
			}
		}})
	t.Cleanup(s.Close)
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".saga/stories/add-logout-button")
	hold.Store(true)
	os.WriteFile(filepath.Join(dir, "notes-a.json"), []byte("{}"), 0o644)
	<-held // the funnel waits: the watcher's queue fills
	// Two files in turn, so the kernel merges no two events; beyond what
	// it keeps, what the watcher's goroutines hold (a read's buffer of
	// 64 KiB, a channel of 64).
	for i := range limit + 8000 {
		name := []string{"notes-a.json", "notes-b.json"}[i%2]
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task := filepath.Join(dir, "write-tests.json")
	src, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	done := bytes.Replace(src, []byte(`"pending"`), []byte(`"completed"`), 1)
	if bytes.Equal(done, src) {
		t.Fatalf("%s is not pending:\n%s", task, src)
	}
	if err := os.WriteFile(task, done, 0o644); err != nil {
		t.Fatal(err)
	}
	close(release)
	deadline := time.After(time.Minute) // a bound on failure, not a wait: the changes below end it
	for {
		if f := s.Workspace().File(".saga/stories/add-logout-button/write-tests.json"); f != nil && f.Task != nil && f.Task.Status == "completed" {
			break
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("the task completed while events were lost is still not seen completed; the log:\n%s", logged.String())
		}
	}
	if !strings.Contains(logged.String(), "events lost") {
		t.Fatalf("the queue never overflowed (%d writes, max_queued_events %d); the log:\n%s", limit+8000, limit, logged.String())
	}
}
