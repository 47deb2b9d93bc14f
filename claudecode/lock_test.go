//go:build unix

package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The cross-process tests run this test binary as helper processes
// (testkit.RunHelper).
func TestMain(m *testing.M) {
	testkit.RunHelper(map[string]func([]string) error{"listcount": helperListCount, "update": helperUpdate, "hold": helperHold})
	testkit.Main(m)
}

// helperListCount: args dir, file, n. n times: take the list lock, read a
// decimal counter from file, write it plus one (in place, on purpose: only
// the lock keeps the increments apart), release.
func helperListCount(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("want dir file n, got %q", args)
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		release, err := acquireListLock(ctx, args[0], claudeTiming())
		cancel()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		k, err := strconv.Atoi(string(b))
		if err != nil {
			return fmt.Errorf("counter %q: %w", b, err)
		}
		if err := os.WriteFile(args[1], []byte(strconv.Itoa(k+1)), 0o644); err != nil {
			return err
		}
		release()
	}
	return nil
}

// helperUpdate: args dir, id, key, n. n times: Update the task, adding one
// to metadata[key] and to metadata["total"].
func helperUpdate(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("want dir id key n, got %q", args)
	}
	n, err := strconv.Atoi(args[3])
	if err != nil {
		return err
	}
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := Update(ctx, args[0], args[1], func(t *Task) error {
			bump(t, args[2])
			bump(t, "total")
			return nil
		})
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

func bump(t *Task, key string) {
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	n, _ := t.Metadata[key].(float64)
	t.Metadata[key] = n + 1
}

// helperHold: args dir. Takes the list lock, prints "locked", and releases
// it when stdin closes (or dies holding it when killed).
func helperHold(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want dir, got %q", args)
	}
	release, err := acquireListLock(context.Background(), args[0], claudeTiming())
	if err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	release()
	return nil
}

// holder starts a helper holding the list lock of dir; closing stdin makes
// it release the lock and exit.
func holder(t *testing.T, dir string) (cmd *exec.Cmd, stdin io.WriteCloser) {
	t.Helper()
	cmd = testkit.HelperCmd("hold", dir)
	stdin, _, err := testkit.StartHelper(cmd, "locked")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, stdin
}

func listDir(t *testing.T) string {
	t.Helper()
	dir := ListDir(t.TempDir(), "saga__s__1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestLockLayout(t *testing.T) {
	dir := listDir(t)
	release, err := acquireListLock(within(t, 10*time.Second), dir, claudeTiming())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".lock.lock")); err != nil || !fi.IsDir() {
		t.Errorf(".lock.lock: %v, %v; want a directory", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".lock")); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf(".lock: %v, %v; want an empty file", fi, err)
	}
	releaseTask, err := acquireTaskLock(within(t, 10*time.Second), dir, "write-tests", claudeTiming())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "write-tests.json.lock")); err != nil || !fi.IsDir() {
		t.Errorf("write-tests.json.lock: %v, %v; want a directory", fi, err)
	}
	releaseOdd, err := acquireTaskLock(within(t, 10*time.Second), dir, "a/b", claudeTiming())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a-b.json.lock")); err != nil {
		t.Errorf("the task lock of %q is not at its sanitised name: %v", "a/b", err)
	}
	releaseOdd()
	releaseTask()
	release()
	release() // twice is harmless
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != ".lock" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after release the dir holds %q, want only .lock (kept)", names)
	}

	if _, err := acquireTaskLock(within(t, time.Second), dir, "", claudeTiming()); err == nil {
		t.Error("acquireTaskLock with an empty id: want an error")
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := acquireListLock(within(t, time.Second), missing, claudeTiming()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("acquireListLock on a missing dir = %v, want an error naming it", err)
	}
}

func TestLockExclusionGoroutines(t *testing.T) {
	dir := listDir(t)
	for _, tc := range []struct {
		name    string
		acquire func(ctx context.Context) (func(), error)
	}{
		{"list", func(ctx context.Context) (func(), error) { return acquireListLock(ctx, dir, claudeTiming()) }},
		{"task", func(ctx context.Context) (func(), error) { return acquireTaskLock(ctx, dir, "t1", claudeTiming()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := testkit.Holders(t, 8, 10, 200*time.Microsecond, func() (func() error, error) {
				release, err := tc.acquire(within(t, 30*time.Second))
				return func() error { release(); return nil }, err
			})
			if m != 1 {
				t.Errorf("%d holders at once, want 1", m)
			}
			if c != 80 {
				t.Errorf("%d critical sections, want 80", c)
			}
		})
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	dir := listDir(t)
	counter := filepath.Join(t.TempDir(), "counter")
	if err := os.WriteFile(counter, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Hydrate(within(t, 10*time.Second), dir, []Task{{ID: "1", Subject: "s", Status: StatusPending}}); err != nil {
		t.Fatal(err)
	}
	const procs, n = 4, 25
	var cmds []*exec.Cmd
	var stderrs []*bytes.Buffer
	for i := range procs {
		for _, cmd := range []*exec.Cmd{
			testkit.HelperCmd("listcount", dir, counter, strconv.Itoa(n)),
			testkit.HelperCmd("update", dir, "1", fmt.Sprintf("p%d", i), strconv.Itoa(n)),
		} {
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmds, stderrs = append(cmds, cmd), append(stderrs, &stderr)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
	}
	// This process competes too.
	for range n {
		if err := Update(within(t, 60*time.Second), dir, "1", func(t *Task) error { bump(t, "parent"); bump(t, "total"); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d (%s): %v\n%s", i, cmd.Args[len(cmd.Args)-1], err, stderrs[i])
		}
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != strconv.Itoa(procs*n) {
		t.Errorf("list-lock counter = %s, want %d (lost updates)", b, procs*n)
	}
	tasks, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := tasks["1"].Metadata
	if meta["total"] != float64((procs+1)*n) || meta["parent"] != float64(n) {
		t.Errorf("metadata = %v, want total %d, parent %d", meta, (procs+1)*n, n)
	}
	for i := range procs {
		if k := fmt.Sprintf("p%d", i); meta[k] != float64(n) {
			t.Errorf("metadata[%s] = %v, want %d", k, meta[k], n)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.json.lock"))
	if _, err := os.Stat(filepath.Join(dir, ".lock.lock")); err == nil {
		leftovers = append(leftovers, ".lock.lock")
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp.*"))
	if len(leftovers)+len(tmps) != 0 {
		t.Errorf("left behind: %q %q", leftovers, tmps)
	}
}

func TestLockHeldByOtherProcess(t *testing.T) {
	dir := listDir(t)
	lockDir := filepath.Join(dir, ".lock.lock")

	// Released by its holder: a waiter gets it promptly.
	held, stdin := holder(t, dir)
	if _, err := acquireListLock(within(t, 200*time.Millisecond), dir, claudeTiming()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquireListLock while held elsewhere = %v, want DeadlineExceeded", err)
	}
	got := make(chan error, 1)
	tried := testkit.Opened(t, lockDir) // a waiter opens the lock to judge it
	go func() {
		release, err := acquireListLock(within(t, 30*time.Second), dir, claudeTiming())
		if err == nil {
			release()
		}
		got <- err
	}()
	<-tried
	_ = stdin.Close()
	if err := <-got; err != nil {
		t.Fatalf("after the holder released: %v", err)
	}
	if err := held.Wait(); err != nil {
		t.Fatal(err)
	}

	// Killed while holding: the lock directory stays (mkdir locks do not
	// die with their holder) until it is stale.
	held, _ = holder(t, dir)
	if err := held.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = held.Wait()
	if _, err := acquireListLock(within(t, 200*time.Millisecond), dir, claudeTiming()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquireListLock on a fresh abandoned lock = %v, want DeadlineExceeded", err)
	}
	old := time.Now().Add(-staleAfter - time.Second)
	if err := os.Chtimes(lockDir, old, old); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	release, err := acquireListLock(within(t, 5*time.Second), dir, claudeTiming())
	if err != nil {
		t.Fatalf("acquireListLock on a stale lock: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("taking over a stale lock took %v", d)
	}
	if fi, err := os.Stat(lockDir); err != nil || time.Since(fi.ModTime()) > 2*time.Second {
		t.Errorf("the taken-over lock should be fresh: %v, %v", fi, err)
	}
	release()
	asides, _ := filepath.Glob(lockDir + ".stale.*")
	if len(asides) != 0 {
		t.Errorf("stale lock left aside: %q", asides)
	}
}

func TestLockStale(t *testing.T) {
	tests := []struct {
		name      string
		age       time.Duration
		wantTaken bool
	}{
		{"fresh", 0, false},
		{"9s old", 9 * time.Second, false},
		{"11s old", 11 * time.Second, true},
		{"an hour old", time.Hour, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := listDir(t)
			lock := filepath.Join(dir, "7.json.lock")
			if err := os.Mkdir(lock, 0o755); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.age)
			if err := os.Chtimes(lock, at, at); err != nil {
				t.Fatal(err)
			}
			release, err := acquireTaskLock(within(t, 300*time.Millisecond), dir, "7", claudeTiming())
			if tc.wantTaken {
				if err != nil {
					t.Fatalf("stale lock not taken over: %v", err)
				}
				release()
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("live lock: err = %v, want DeadlineExceeded", err)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Errorf("a live lock was removed: %v", err)
			}
		})
	}
}

func TestLockRefreshAndTakeover(t *testing.T) {
	dir := listDir(t)
	lock := filepath.Join(dir, ".lock.lock")
	fast := lockTiming{stale: 10 * time.Second, refresh: 20 * time.Millisecond}
	releaseA, err := acquireListLock(within(t, 5*time.Second), dir, fast)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	// The holder touches it.
	if !testkit.WaitUntil(10*time.Second, func() bool {
		fi, err := os.Stat(lock)
		return err == nil && time.Since(fi.ModTime()) < 5*time.Second
	}) {
		t.Fatal("the holder never refreshed its lock's mtime")
	}
	releaseA()
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("release left the lock: %v", err)
	}

	// A holder that stalls past the stale time loses its lock; its release
	// must not remove the new holder's lock, and its refresher must not
	// keep that one alive.
	slow := lockTiming{stale: 10 * time.Second, refresh: time.Hour}
	releaseA, err = acquireListLock(within(t, 5*time.Second), dir, slow)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	releaseB, err := acquireListLock(within(t, 5*time.Second), dir, slow)
	if err != nil {
		t.Fatalf("taking over the stalled holder's lock: %v", err)
	}
	releaseA()
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the stalled holder's release removed the new holder's lock: %v", err)
	}
	releaseB()
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("release left the lock: %v", err)
	}
}

func TestLockContext(t *testing.T) {
	dir := listDir(t)
	release, err := acquireListLock(within(t, 5*time.Second), dir, claudeTiming())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, tc := range testkit.ContextEnds() {
		t.Run(tc.Name, func(t *testing.T) {
			ctx, cancel := tc.New()
			defer cancel()
			start := time.Now()
			rel, err := acquireListLock(ctx, dir, claudeTiming())
			if rel != nil || !errors.Is(err, tc.Err) {
				t.Fatalf("acquireListLock = %v, %v; want nil, %v", rel != nil, err, tc.Err)
			}
			if !strings.Contains(err.Error(), ".lock.lock") {
				t.Errorf("error %q does not name the lock", err)
			}
			// The ctx ends at ≤ 50 ms; the backoff is ≤ 100 ms.
			if d := time.Since(start); d > time.Second {
				t.Errorf("returned %v after start, want promptly", d)
			}
		})
	}
}
