package git

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/store"
)

// fakeGit is a git that fails the first n calls with stderr msg, then
// succeeds printing "ok"; it counts its calls in a file.
func fakeGit(t *testing.T, n int, msg string) (bin, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "git")
	script := "#!/bin/sh\necho x >> " + calls + "\n" +
		"if [ $(wc -l < " + calls + ") -le " + string(rune('0'+n)) + " ]; then echo \"" + msg + "\" >&2; exit 128; fi\necho ok\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

func count(t *testing.T, calls string) int {
	data, _ := os.ReadFile(calls)
	return strings.Count(string(data), "\n")
}

// Retry repeats a command while another git holds a lock it needs, and
// only then.
func TestRetry(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		msg       string
		failures  int
		wantCalls int
		wantErr   bool
	}{
		{"error: could not lock config file .git/config: File exists", 3, 4, false},
		{"error: cannot lock ref 'refs/remotes/origin/main': Unable to create '/r/.git/refs/remotes/origin/main.lock': File exists.", 2, 3, false},
		{"fatal: couldn't find remote ref nope", 1, 1, true}, // not a lock: no retry
	} {
		bin, calls := fakeGit(t, c.failures, c.msg)
		out, err := Repo{Bin: bin, Dir: t.TempDir()}.Retry(ctx, "fetch", "origin")
		if got := count(t, calls); got != c.wantCalls || (err != nil) != c.wantErr || (err == nil && out != "ok") {
			t.Errorf("%q: %d calls (want %d), out %q, err %v", c.msg, got, c.wantCalls, out, err)
		}
	}
	// A cancelled context ends the waiting.
	bin, calls := fakeGit(t, 9, "error: could not lock config file .git/config: File exists")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (Repo{Bin: bin, Dir: t.TempDir()}).Retry(cctx, "config", "a.b", "c"); err == nil || count(t, calls) > 1 {
		t.Errorf("cancelled: err %v after %d calls", err, count(t, calls))
	}
}

// A failing git command's error carries git's reason, from stderr or, when
// git put it on stdout only (commit), from there.
func TestErrorSaysWhy(t *testing.T) {
	repo := t.TempDir()
	g := Repo{Dir: repo}
	ctx := context.Background()
	if _, err := g.Run(ctx, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	_, err := g.Run(ctx, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-m", "nothing")
	if err == nil || !strings.Contains(err.Error(), "nothing to commit") {
		t.Errorf("commit with nothing staged: %v", err)
	}
	_, err = g.Run(ctx, "rev-parse", "--verify", "no-such-ref")
	if err == nil || !strings.Contains(err.Error(), "Needed a single revision") {
		t.Errorf("rev-parse: %v", err)
	}
}

// TestWorktreesRel: the folder git excludes is the model's folder of story
// worktrees.
func TestWorktreesRel(t *testing.T) {
	if worktreesRel != store.WorktreesRel {
		t.Fatalf("worktreesRel is %q, store.WorktreesRel %q", worktreesRel, store.WorktreesRel)
	}
}

// On Linux every git saga-lsp runs asks glibc for huge pages for its heap
// (hugePageTunable), beside the tunables the user set, whose own choice of
// that tunable is kept.
func TestGitAsksForHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("glibc's tunables are Linux's")
	}
	ctx := context.Background()
	g := Repo{Dir: t.TempDir()}
	tunables := func() string {
		t.Helper()
		out, err := g.Run(ctx, "-c", "alias.tunables=!printenv GLIBC_TUNABLES", "tunables")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct{ user, want string }{
		{"", hugePageTunable},
		{"glibc.malloc.arena_max=2", "glibc.malloc.arena_max=2:" + hugePageTunable},
		{"glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0"},
	} {
		t.Setenv("GLIBC_TUNABLES", c.user)
		if got := tunables(); got != c.want {
			t.Errorf("GLIBC_TUNABLES=%q: git saw %q, want %q", c.user, got, c.want)
		}
	}
}
