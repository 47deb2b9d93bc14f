// Package git is the one runner of git in saga-lsp (the worker, run's
// preflight and branch preparation, the epic state, clean, verified
// completion, the hook): argument vectors, never a shell string, never the
// repository's own hooks, never replace refs or grafts, a fixed locale,
// huge pages for its heap on Linux, a bounded wait for children git leaves
// behind; reads of files at a commit verified against the commit's hash
// (objects.go), one cat-file batch asked in turns per read (catfile.go);
// which working files are as a branch committed them (asis.go); changes to
// the worktree registry under one repository lock; and reads what git
// lists of them (Worktrees) and of the refs (refs.go: ListRefs).
package git

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// Repo runs git with an argument vector (never a shell string) in Dir,
// without repository hooks: nothing an agent planted in the repository's
// configuration runs outside its sandbox.
type Repo struct {
	Bin string // default "git"
	Dir string
}

func (g Repo) Run(ctx context.Context, args ...string) (string, error) {
	out, err := g.Raw(ctx, args...)
	return strings.TrimSpace(out), err
}

// Raw is Run without trimming the output (porcelain formats start with a
// space).
func (g Repo) Raw(ctx context.Context, args ...string) (string, error) {
	return g.RawInput(ctx, nil, args...)
}

// RawInput is Raw with input on git's stdin (cat-file --batch).
func (g Repo) RawInput(ctx context.Context, input []byte, args ...string) (string, error) {
	cmd := g.command(ctx, args)
	if input != nil {
		cmd.Stdin = bytes.NewReader(input)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// git says why on stderr, but some commands only on stdout
		// (commit: "nothing to commit…").
		msg := cmp.Or(strings.TrimSpace(errb.String()), strings.TrimSpace(out.String()), err.Error())
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.String(), nil
}

// command is git with args in Dir, its arguments and environment fixed
// (fixedArgs, fixedEnv).
func (g Repo) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cmp.Or(g.Bin, "git"), fixedArgs(args)...)
	cmd.Dir = g.Dir
	cmd.Env = fixedEnv(os.Environ())
	// A filter, credential helper or ssh that git started can outlive it
	// (killed on cancel, or a daemon) holding the output pipes open: wait
	// for them that long at most, not forever. git stays in our process
	// group, so that ssh can still ask the terminal for a passphrase.
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// MergeConflicts tries a merge of theirs into ours without touching a
// worktree, the index or a ref (git merge-tree --write-tree, git ≥ 2.38):
// the files that would conflict, none when it merges cleanly.
func (g Repo) MergeConflicts(ctx context.Context, ours, theirs string) ([]string, error) {
	_, files, err := g.MergeTree(ctx, ours, theirs)
	return files, err
}

// MergeTree merges theirs into ours without touching a worktree, the index
// or a ref (git merge-tree --write-tree, git ≥ 2.38): the merged tree when
// it merges cleanly, else the files that conflict.
func (g Repo) MergeTree(ctx context.Context, ours, theirs string) (tree string, conflicts []string, err error) {
	args := []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs}
	cmd := exec.CommandContext(ctx, cmp.Or(g.Bin, "git"), fixedArgs(args)...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = g.Dir, fixedEnv(os.Environ()), 2*time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	parts := strings.Split(strings.TrimRight(out.String(), "\x00"), "\x00")
	var ee *exec.ExitError
	switch {
	case err == nil && parts[0] != "":
		return parts[0], nil, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1 && out.Len() > 0: // conflicts: the tree, then the files
		// (exit 1 without a tree is a refusal: "not something we can merge")
		for _, f := range parts[1:] {
			if f != "" && !slices.Contains(conflicts, f) {
				conflicts = append(conflicts, f)
			}
		}
		return "", conflicts, nil
	}
	return "", nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), cmp.Or(strings.TrimSpace(errb.String()), fmt.Sprint(err), "no tree"))
}

// fixedArgs and fixedEnv are given to every git saga-lsp runs. Hooks
// off: nothing planted in the repository runs outside a sandbox. Replace
// refs and grafts off (GIT_NO_REPLACE_OBJECTS alone leaves info/grafts in
// force): a commit is what its hash says, so "the checks as committed at
// <sha>" cannot be swapped by a ref in refs/replace/ or a line in
// info/grafts (the advice is the graft file's deprecation hint, printed
// even for /dev/null). Messages in English whatever the user's locale:
// errors are matched (lockHeld) and worktree lock reasons read
// (RemoveDeadWorktree). An alternates file (objects/info/alternates) cannot
// be switched off by git's environment: reads that decide what counts go
// through FilesAt, which checks every object against its hash.
func fixedArgs(args []string) []string {
	return append([]string{"-c", "core.hooksPath=/dev/null", "-c", "advice.graftFileDeprecated=false"}, args...)
}

// fixedEnv also drops the variables that would point git at other
// objects, another index or another repository than Dir's (a saga-lsp
// started from a git hook inherits GIT_DIR).
func fixedEnv(env []string) []string {
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_SHALLOW_FILE", "GIT_QUARANTINE_PATH":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=/dev/null")
	if runtime.GOOS == "linux" {
		out = withHugePages(out)
	}
	return out
}

// hugePageTunable has glibc ask the kernel for transparent huge pages for
// git's heap (madvise; Linux's usual THP setting grants them only on
// request). Reading a 100,000-entry index allocates ≈ 13 MB, which in
// 4 KiB pages is ≈ 3,800 page faults — most of `write-tree`'s time where a
// fault is dear, as on a virtual machine: write-tree 0.084 → 0.033 s,
// status 0.41 → 0.31 s, a small git process unchanged
// (docs/architecture.md#cost-follows-the-change-100000-files). glibc
// ignores a tunable it does not know, other C libraries the variable.
const hugePageTunable = "glibc.malloc.hugetlb=1"

// withHugePages adds hugePageTunable to env's GLIBC_TUNABLES, unless the
// user chose that tunable's value there.
func withHugePages(env []string) []string {
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GLIBC_TUNABLES="); ok {
			switch {
			case v == "":
				env[i] = kv + hugePageTunable
			case !strings.Contains(v, "glibc.malloc.hugetlb="):
				env[i] = kv + ":" + hugePageTunable
			}
			return env
		}
	}
	return append(env, "GLIBC_TUNABLES="+hugePageTunable)
}

// Retry is Run for a command that is safe to repeat (fetch, push, config),
// repeated while another git process holds a lock it needs: git gives up at
// once on a held config or ref lock, and the workers of an epic run share
// one repository.
func (g Repo) Retry(ctx context.Context, args ...string) (string, error) {
	deadline := time.Now().Add(lockWait)
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		out, err := g.Run(ctx, args...)
		if err == nil || !lockHeld(err) || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(delay):
		}
	}
}

// lockWait bounds how long Retry waits for another git process's lock.
const lockWait = 10 * time.Second

// lockHeld tells a git error caused by another process holding a lock file.
func lockHeld(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "could not lock config file") ||
		strings.Contains(msg, "cannot lock ref") ||
		strings.Contains(msg, ".lock': File exists")
}

// Worktree runs `git worktree <args…>` (move, remove, repair…) holding
// the repository's worktree-registry lock. git writes a worktree's entry
// under .git/worktrees/ in steps, and a prune by another program of the
// same repository meanwhile removes a half-made entry ("could not open
// '.git/worktrees/<name>/locked'": seen with two stories of an epic started
// at once) or the entry of a worktree being moved.
func (g Repo) Worktree(ctx context.Context, args ...string) (string, error) {
	lock, err := g.lockRegistry(ctx)
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	return g.Run(ctx, append([]string{"worktree"}, args...)...)
}

// AddWorktree runs `git worktree add <args…>` after pruning stale entries (a
// worktree folder deleted by hand makes add fail), both under one hold of
// the worktree-registry lock. The new worktree's index is split
// (core.splitIndex; git keeps it split while the setting is unset): each
// later write of it — a status's refresh, an add, write-tree — writes the
// entries that changed, not all of them again (9 MB at 100,000 files;
// docs/architecture.md#cost-follows-the-change-100000-files).
func (g Repo) AddWorktree(ctx context.Context, args ...string) (string, error) {
	lock, err := g.lockRegistry(ctx)
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	g.Run(ctx, "worktree", "prune")
	// Once begun, an add is let finish: one killed half-way leaves a
	// half-checked-out worktree (RemoveDeadWorktree).
	return g.Run(context.WithoutCancel(ctx), append([]string{"-c", "core.splitIndex=true", "worktree", "add"}, args...)...)
}

// RemoveDeadWorktree removes the worktree registered at path when its add
// never finished, and reports whether it did. git marks a new entry "locked
// initializing" until the checkout is done, so an add killed meanwhile
// (SIGKILL, a reboot) leaves one half checked out, which would otherwise be
// taken for a worktree to resume in. Under the registry lock no add of
// saga-lsp's is under way, so such an entry is dead; a worktree a person
// locked for another reason is left alone.
func (g Repo) RemoveDeadWorktree(ctx context.Context, path string) (bool, error) {
	lock, err := g.lockRegistry(ctx)
	if err != nil {
		return false, err
	}
	defer lock.Unlock()
	wts, err := g.Worktrees(ctx)
	if err != nil {
		return false, err
	}
	want := filesafe.CanonicalPath(path)
	for _, w := range wts {
		if filesafe.CanonicalPath(w.Path) != want || !w.Locked || w.Reason != "initializing" {
			continue
		}
		if _, err := g.Run(ctx, "worktree", "remove", "--force", "--force", w.Path); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// lockRegistry takes the repository's worktree-registry lock, held while
// saga-lsp changes the registry.
func (g Repo) lockRegistry(ctx context.Context) (*filesafe.Lock, error) {
	lock, err := filesafe.AcquireLock(ctx, g.Dir, worktreesLock)
	if err != nil {
		return nil, fmt.Errorf("lock the worktree registry: %w", err)
	}
	return lock, nil
}

// worktreesLock names the registry lock (filesafe.AcquireLock).
const worktreesLock = "git-worktrees"

// worktreesRel is store.WorktreesRel, the folder of story worktrees, which
// git excludes; spelled here so that git stays below the model
// (TestWorktreesRel holds the two equal).
const worktreesRel = ".saga/worktrees"

// In is the same git in another directory (a worktree).
func (g Repo) In(dir string) Repo { return Repo{Bin: g.Bin, Dir: dir} }

// OK reports whether a git command succeeds (for probes like "does this ref exist").
func (g Repo) OK(ctx context.Context, args ...string) bool {
	_, err := g.Run(ctx, args...)
	return err == nil
}

// HasRemote reports whether the repository has a remote named origin.
func (g Repo) HasRemote(ctx context.Context) bool {
	out, err := g.Run(ctx, "remote")
	if err != nil {
		return false
	}
	for _, r := range strings.Fields(out) {
		if r == "origin" {
			return true
		}
	}
	return false
}

// Identity returns -c flags giving commits an author when the repository
// has none configured (a fresh CI machine); the user's own identity wins.
func (g Repo) Identity(ctx context.Context) []string {
	if email, _ := g.Run(ctx, "config", "user.email"); email != "" {
		return nil
	}
	return []string{"-c", "user.name=saga-lsp worker", "-c", "user.email=saga-lsp@localhost"}
}

// CommonDir is the repository's common git dir (a worktree's shares it),
// absolute as git names it.
func (g Repo) CommonDir(ctx context.Context) (string, error) {
	common, err := g.Run(ctx, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(g.Dir, common)
	}
	return common, nil
}

// ExcludeWorktrees adds the worktrees folder to the repository's
// info/exclude so story worktrees never show up as untracked files.
func (g Repo) ExcludeWorktrees(ctx context.Context) error {
	common, err := g.CommonDir(ctx)
	if err != nil {
		return err
	}
	return ExcludeWorktreesIn(common)
}

// ExcludeWorktreesIn is ExcludeWorktrees for the common git dir common,
// already asked.
func ExcludeWorktreesIn(common string) error {
	path := filepath.Join(common, "info", "exclude")
	data, _ := os.ReadFile(path)
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == worktreesRel+"/" {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, worktreesRel+"/\n"...)
	return filesafe.WriteFileAtomic(path, data, 0o644)
}

// Worktree is one entry of `git worktree list --porcelain`.
type Worktree struct {
	Path     string // as git records it (absolute)
	Branch   string // short name ("story/x"); "" when detached
	Locked   bool
	Reason   string // why it is locked, when given
	Prunable bool   // its folder (or .git file) is gone
}

// Worktrees lists the repository's worktrees, the main checkout first.
func (g Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := g.Raw(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var wts []Worktree
	for block := range strings.SplitSeq(out, "\n\n") {
		var w Worktree
		for line := range strings.SplitSeq(block, "\n") {
			key, val, _ := strings.Cut(line, " ")
			switch key {
			case "worktree":
				w.Path = val
			case "branch":
				w.Branch = strings.TrimPrefix(val, "refs/heads/")
			case "locked":
				w.Locked, w.Reason = true, val
			case "prunable":
				w.Prunable = true
			}
		}
		if w.Path != "" {
			wts = append(wts, w)
		}
	}
	return wts, nil
}
