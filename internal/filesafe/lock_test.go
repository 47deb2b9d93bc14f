//go:build unix

package filesafe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The cross-process tests run this test binary as helper processes
// (testkit.RunHelper).
func TestMain(m *testing.M) {
	testkit.RunHelper(map[string]func([]string) error{"counter": helperCounter, "storm": helperStorm, "hold": helperHold,
		"temp": helperTemp, "flock": helperFlock})
	testkit.Main(m)
}

// exitWhenStdinCloses makes a helper die with the test process, so an
// aborted test never leaves writers running.
func exitWhenStdinCloses() {
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
}

// helperCounter: args root, file, n. n times: lock "story-x", read
// {"n": k} from file, write {"n": k+1}, unlock.
func helperCounter(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("want root file n, got %q", args)
	}
	root, file := args[0], args[1]
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	last := -1
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		l, err := AcquireLock(ctx, root, "story-x")
		cancel()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var c struct{ N *int }
		if err := json.Unmarshal(b, &c); err != nil || c.N == nil {
			return fmt.Errorf("counter %q: %v", b, err)
		}
		// Under the lock nobody can have undone our own last increment.
		if *c.N < last {
			return fmt.Errorf("counter went back from %d to %d", last, *c.N)
		}
		last = *c.N + 1
		if err := WriteFileAtomic(file, []byte(fmt.Sprintf(`{"n": %d}`, last)), 0o644); err != nil {
			return err
		}
		if err := l.Unlock(); err != nil {
			return err
		}
	}
	return nil
}

const stormFiles = 5

func stormPath(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("task-%d.json", i))
}

// stormDoc is the one document a writer produces for gen: 100 B to ~64 KB,
// with pad length and letter derived from gen so a reader can tell a whole
// document from a torn or mixed one.
func stormDoc(gen uint64) []byte {
	pad := strings.Repeat(string(rune('a'+gen%26)), 80+int(gen%(64*1024-120)))
	return []byte(fmt.Sprintf(`{"gen": %d, "pad": %q}`, gen, pad))
}

// checkStormDoc reports whether b parses as JSON and is exactly
// stormDoc(gen) for its own gen.
func checkStormDoc(b []byte) error {
	var d struct {
		Gen *uint64
		Pad *string
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("invalid JSON (%d bytes): %w", len(b), err)
	}
	if d.Gen == nil || d.Pad == nil {
		return fmt.Errorf("incomplete document (%d bytes)", len(b))
	}
	if !bytes.Equal(b, stormDoc(*d.Gen)) {
		return fmt.Errorf("gen %d: not the document a writer produced (%d bytes)", *d.Gen, len(b))
	}
	return nil
}

// helperStorm: args dir, seed. Rewrites the storm files forever with fresh
// documents; prints "ready" after its first write so the parent kills it
// mid-storm rather than during start-up.
func helperStorm(args []string) error {
	exitWhenStdinCloses()
	if len(args) != 2 {
		return fmt.Errorf("want dir seed, got %q", args)
	}
	seed, err := strconv.ParseUint(args[1], 10, 64)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, uint64(os.Getpid())))
	deadline := time.Now().Add(2 * time.Minute) // backstop if never killed
	for k := 0; time.Now().Before(deadline); k++ {
		gen := r.Uint64N(1 << 53)
		if err := WriteFileAtomic(stormPath(args[0], r.IntN(stormFiles)), stormDoc(gen), 0o644); err != nil {
			return err
		}
		if k == 0 {
			fmt.Println("ready")
		}
	}
	return errors.New("storm writer was never killed")
}

// helperHold: args root, name. Takes the lock, prints "locked", holds it
// until killed or stdin closes.
func helperHold(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("want root name, got %q", args)
	}
	l, err := AcquireLock(context.Background(), args[0], args[1])
	if err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return l.Unlock()
}

// helperTemp: args path. Starts an atomic write of path — its temp file
// written and locked — prints the temp file's name, and stops there until
// killed, as a writer killed mid-write does.
func helperTemp(args []string) error {
	exitWhenStdinCloses()
	if len(args) != 1 {
		return fmt.Errorf("want path, got %q", args)
	}
	f, name, err := writeTemp(args[0], []byte(`{"partial": true}`), 0o644, false, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Println(filepath.Base(name))
	select {}
}

// helperFlock: args path. Holds an flock on path (as a writer in another
// pid namespace would, whose pid means nothing here), prints "locked".
func helperFlock(args []string) error {
	exitWhenStdinCloses()
	if len(args) != 1 {
		return fmt.Errorf("want path, got %q", args)
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	fmt.Println("locked")
	select {}
}

// startHelperLine starts cmd (testkit.StartHelperLine) and returns the
// first line it prints; the helper is killed at the end of the test.
func startHelperLine(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	line, _, _, err := testkit.StartHelperLine(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return line
}

// gitRepoWithWorktree creates a repository with one commit and a worktree
// at <main>/.saga/worktrees/s1, as the worker does.
func gitRepoWithWorktree(t *testing.T) (mainDir, wtDir string) {
	t.Helper()
	mainDir = filepath.Join(t.TempDir(), "repo")
	testkit.InitRepo(t, mainDir)
	wtDir = testkit.Worktree(t, mainDir, ".saga/worktrees/s1", "story-s1")
	for _, d := range []string{mainDir, wtDir} {
		if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return mainDir, wtDir
}

func TestLockDirGitWorktree(t *testing.T) {
	mainDir, wtDir := gitRepoWithWorktree(t)
	want := filepath.Join(CanonicalPath(filepath.Join(mainDir, ".git")), "saga-lsp", "locks")
	for _, root := range []string{
		mainDir, filepath.Join(mainDir, "sub"), mainDir + "/sub/..",
		wtDir, filepath.Join(wtDir, "sub"),
	} {
		got, err := LockDir(root)
		if err != nil {
			t.Fatalf("LockDir(%s): %v", root, err)
		}
		if got != want {
			t.Errorf("LockDir(%s) = %s, want %s", root, got, want)
		}
	}
}

func TestLockDirGitFiles(t *testing.T) {
	// Layouts written by hand, so the parsing is covered without git.
	base := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(base, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("repo/.git/worktrees/w1")
	write("repo/.git/worktrees/w1/commondir", "../..\n")
	write("w1/.git", "gitdir: ../repo/.git/worktrees/w1\n") // relative gitdir
	mkdir("repo/.git/worktrees/w2")
	write("repo/.git/worktrees/w2/commondir", filepath.Join(base, "repo/.git")+"\r\n") // absolute commondir
	write("w2/.git", "gitdir: "+filepath.Join(base, "repo/.git/worktrees/w2")+"\n")
	mkdir("repo/.git/modules/sub") // submodule: gitdir without commondir
	write("repo/sub/.git", "gitdir: ../.git/modules/sub\n")
	write("bad/.git", "not a gitdir file\n")
	write("dangling/.git", "gitdir: ../nowhere\n")
	mkdir("w1/deep/er")

	repoLocks := filepath.Join(base, "repo/.git/saga-lsp/locks")
	tests := []struct {
		root    string
		want    string
		wantErr bool
	}{
		{root: "repo", want: repoLocks},
		{root: "w1", want: repoLocks},
		{root: "w1/deep/er", want: repoLocks},
		{root: "w2", want: repoLocks},
		{root: "repo/sub", want: filepath.Join(base, "repo/.git/modules/sub/saga-lsp/locks")},
		{root: "bad", wantErr: true},
		{root: "dangling", wantErr: true},
	}
	for _, tc := range tests {
		got, err := LockDir(filepath.Join(base, tc.root))
		if tc.wantErr {
			if err == nil {
				t.Errorf("LockDir(%s) = %s, want error", tc.root, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("LockDir(%s) = %s, %v; want %s", tc.root, got, err, tc.want)
		}
	}
}

func TestLockDirOutsideGit(t *testing.T) {
	root := t.TempDir()
	if _, found, _ := gitCommonDir(CanonicalPath(root)); found {
		testkit.Needs(t, "a temp dir outside any git repository (TMPDIR)")
	}
	got, err := LockDir(root + "/./")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(CanonicalPath(root)))
	want := filepath.Join(TempLockRoot(), hex.EncodeToString(sum[:])[:16])
	if got != want {
		t.Errorf("LockDir = %s, want %s", got, want)
	}
	if strings.HasPrefix(got, root) {
		t.Errorf("lock dir %s is inside root", got)
	}
	other, err := LockDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if other == got {
		t.Errorf("two different roots share lock dir %s", got)
	}
}

// fakeLockRepo returns a directory with an empty .git directory, which is all
// LockDir needs; the lock files then stay inside the test's temp dir.
func fakeLockRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLockNames(t *testing.T) {
	root := fakeLockRepo(t)
	tests := []struct {
		name  string
		valid bool
	}{
		{"story-abc", true},
		{"worker-01.x_y", true},
		{"..", true}, // becomes "...lock", inside the lock dir
		{"", false},
		{"a/b", false},
		{"../escape", false},
		{"with space", false},
		{"ünï", false},
		{strings.Repeat("x", 201), false},
	}
	for _, tc := range tests {
		l, ok, err := TryLock(root, tc.name)
		if tc.valid != (err == nil) || tc.valid != ok {
			t.Errorf("TryLock(%q) = ok %v, err %v; want valid %v", tc.name, ok, err, tc.valid)
		}
		if l != nil {
			if err := l.Unlock(); err != nil {
				t.Error(err)
			}
		}
		l, err = AcquireLock(context.Background(), root, tc.name)
		if tc.valid != (err == nil) {
			t.Errorf("AcquireLock(%q) err = %v; want valid %v", tc.name, err, tc.valid)
		}
		if l != nil {
			if err := l.Unlock(); err != nil {
				t.Error(err)
			}
		}
		if _, err := LockHolder(root, tc.name); !tc.valid && err == nil {
			t.Errorf("LockHolder(%q) succeeded, want error", tc.name)
		}
		if dir, err := LockDir(root); err != nil {
			t.Fatal(err)
		} else if _, err := LockHolderIn(dir, tc.name); !tc.valid && err == nil {
			t.Errorf("LockHolderIn(%q) succeeded, want error", tc.name)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, ".git", "saga-lsp", "locks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"...lock", "story-abc.lock", "worker-01.x_y.lock"}
	if !flocks {
		want = nil // released lock files are removed
	}
	if !slices.Equal(names, want) {
		t.Errorf("lock dir holds %q, want %q", names, want)
	}
}

func TestLockInProcess(t *testing.T) {
	// flock belongs to the open file, so goroutines of one process exclude
	// each other as separate processes do.
	root := fakeLockRepo(t)
	m, _ := testkit.Holders(t, 8, 20, 100*time.Microsecond, func() (func() error, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := AcquireLock(ctx, root, "story-in")
		if err != nil {
			return nil, err
		}
		return l.Unlock, nil
	})
	if m != 1 {
		t.Errorf("%d holders at once, want 1", m)
	}
}

func TestLockHeldByOtherProcess(t *testing.T) {
	root := fakeLockRepo(t)
	holder := testkit.HelperCmd("hold", root, "story-a")
	if _, _, err := testkit.StartHelper(holder, "locked"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = holder.Process.Kill()
		_ = holder.Wait()
	})
	pid := holder.Process.Pid

	l, ok, err := TryLock(root, "story-a")
	if err != nil || ok || l != nil {
		t.Fatalf("TryLock while held elsewhere = %v, %v, %v; want nil, false, nil", l, ok, err)
	}
	if got, err := LockHolder(root, "story-a"); err != nil || got != pid {
		t.Errorf("LockHolder = %d, %v; want %d", got, err, pid)
	}
	// Another name is an independent lock.
	if l, ok, err := TryLock(root, "story-b"); err != nil || !ok {
		t.Errorf("TryLock(story-b) = %v, %v; want ok", ok, err)
	} else if err := l.Unlock(); err != nil {
		t.Error(err)
	}

	// Cancelled before the call, cancelled while waiting, deadline while
	// waiting: each returns ctx.Err() (the 30 s guard only prevents a hang).
	for _, tc := range testkit.ContextEnds() {
		ctx, cancel := tc.New()
		done := make(chan error, 1)
		go func() {
			l, err := AcquireLock(ctx, root, "story-a")
			if l != nil {
				t.Errorf("%s: got a lock", tc.Name)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tc.Err) || err != ctx.Err() {
				t.Errorf("%s: AcquireLock err = %v, want %v", tc.Name, err, tc.Err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: AcquireLock ignored the context", tc.Name)
		}
		cancel()
	}

	// SIGKILL: the kernel drops the flock, so the lock is free at once and
	// the abandoned waits above hold nothing.
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if got, err := LockHolder(root, "story-a"); err != nil || got != 0 {
		t.Errorf("LockHolder after the holder died = %d, %v; want 0", got, err)
	}
	l, ok, err = TryLock(root, "story-a")
	if err != nil || !ok {
		t.Fatalf("TryLock after SIGKILL of the holder = %v, %v; want ok", ok, err)
	}
	if got, err := LockHolder(root, "story-a"); err != nil || got != os.Getpid() {
		t.Errorf("LockHolder = %d, %v; want own pid %d", got, err, os.Getpid())
	}
	dir, err := LockDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := LockHolderIn(dir, "story-a"); err != nil || got != os.Getpid() {
		t.Errorf("LockHolderIn = %d, %v; want own pid %d", got, err, os.Getpid())
	}
	if names, err := RecordedLocksIn(dir, func(name string) bool { return name != "story-a" }); err != nil || len(names) != 0 {
		t.Errorf("RecordedLocksIn without story-a = %v, %v; want none", names, err)
	}
	if names, err := RecordedLocksIn(dir, nil); err != nil || !slices.Contains(names, "story-a") {
		t.Errorf("RecordedLocksIn = %v, %v; want story-a among them", names, err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, err := LockHolder(root, "story-a"); err != nil || got != 0 {
		t.Errorf("LockHolder after Unlock = %d, %v; want 0", got, err)
	}
	if err := l.Unlock(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Unlock = %v, want os.ErrClosed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err = AcquireLock(ctx, root, "story-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
}

func TestLockCounterAcrossProcessesAndWorktrees(t *testing.T) {
	mainDir, wtDir := gitRepoWithWorktree(t)
	counter := filepath.Join(mainDir, ".saga", "counter.json")
	if err := WriteFileAtomic(counter, []byte(`{"n": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const procs, increments = 8, 50
	cmds := make([]*exec.Cmd, procs)
	stderrs := make([]bytes.Buffer, procs)
	for i := range procs {
		// Half lock via the main checkout, half via the worktree (from a
		// subdirectory for good measure); all update the same file.
		root := mainDir
		if i%2 == 1 {
			root = filepath.Join(wtDir, "sub")
		}
		cmds[i] = testkit.HelperCmd("counter", root, counter, strconv.Itoa(increments))
		cmds[i].Dir = root
		cmds[i].Stderr = &stderrs[i]
	}
	for i, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmds[i].Process.Kill() })
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, &stderrs[i])
		}
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ N int }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("counter %q: %v", b, err)
	}
	if c.N != procs*increments {
		t.Errorf("n = %d, want %d (lost updates)", c.N, procs*increments)
	}

	// The lock lives in the shared git dir; nothing lock-related appears in
	// either checkout's tree.
	lockFile := filepath.Join(mainDir, ".git", "saga-lsp", "locks", "story-x.lock")
	if _, err := os.Stat(lockFile); flocks && err != nil {
		t.Errorf("lock file: %v", err)
	}
	_ = filepath.WalkDir(mainDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return fs.SkipDir
		}
		if strings.HasSuffix(d.Name(), ".lock") || d.Name() == "saga-lsp" || strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("stray file in the tree: %s", p)
		}
		return nil
	})
}

func TestWriteAtomicSIGKILLStorm(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".saga", "stories", "storm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range stormFiles {
		if err := WriteFileAtomic(stormPath(dir, i), stormDoc(uint64(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The reader checks every file continuously: a torn, empty or missing
	// file at any moment fails the test.
	stop := make(chan struct{})
	var reads atomic.Int64
	gens := make(map[uint64]bool) // distinct documents seen, reader-only
	readerDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			for i := range stormFiles {
				b, err := os.ReadFile(stormPath(dir, i))
				if err == nil {
					err = checkStormDoc(b)
				}
				if err != nil {
					readerDone <- fmt.Errorf("read %s: %w", stormPath(dir, i), err)
					return
				}
				var d struct{ Gen uint64 }
				_ = json.Unmarshal(b, &d)
				gens[d.Gen] = true
				reads.Add(1)
			}
		}
	}()

	const slots, killsPerSlot = 4, 12 // 48 SIGKILLs in all
	var kills atomic.Int32
	var wg sync.WaitGroup
	for s := range slots {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(s), uint64(time.Now().UnixNano())))
			for k := range killsPerSlot {
				cmd := testkit.HelperCmd("storm", dir, strconv.Itoa(s*1000+k))
				_, stderr, err := testkit.StartHelper(cmd, "ready")
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(r.IntN(31)) * time.Millisecond)
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Errorf("kill: %v", err)
					return
				}
				err = cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Errorf("writer ended by %v, not SIGKILL; stderr: %s", err, stderr)
					return
				}
				kills.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readerDone; err != nil {
		t.Error(err)
	}
	if n := kills.Load(); n < 40 {
		t.Errorf("only %d writers killed, want at least 40", n)
	}
	t.Logf("%d kills, %d checked reads, %d distinct documents seen", kills.Load(), reads.Load(), len(gens))
	if len(gens) <= stormFiles {
		t.Errorf("reader saw only %d distinct documents; the writers did not write", len(gens))
	}

	for i := range stormFiles {
		b, err := os.ReadFile(stormPath(dir, i))
		if err == nil {
			err = checkStormDoc(b)
		}
		if err != nil {
			t.Errorf("after the storm: %s: %v", stormPath(dir, i), err)
		}
	}
	// A writer killed between creating and renaming its temp file leaves it
	// behind; the name must be one the loader skips, and the next load
	// (which never shows it as a task) removes it: its writer is dead.
	stray := stormStrays(t, dir)
	t.Logf("%d temp files left by killed writers", len(stray))
	for _, name := range stray {
		if !strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".json") || !strings.Contains(name, ".json.tmp-") {
			t.Errorf("stray file %q is not a hidden, non-.json temp file", name)
		}
	}
	if n := LoadTaskCount(t, root, "storm"); n != stormFiles {
		t.Errorf("the loaded story has %d tasks, want its %d task files", n, stormFiles)
	}
	if left := stormStrays(t, dir); len(left) != 0 {
		t.Errorf("after the next load, temp files are left: %q", left)
	}
}

// stormStrays lists what is in dir besides the storm files.
func stormStrays(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	known := make(map[string]bool)
	for i := range stormFiles {
		known[filepath.Base(stormPath(dir, i))] = true
	}
	var out []string
	for _, e := range entries {
		if !known[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}
