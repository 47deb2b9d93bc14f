package runs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// The session dir and the tmux server are the user's, shared by every
// repository, and a story id is only unique within one: two clones, or two
// projects with a story of the same name, each run theirs beside the
// other's. Every reader of runs for a repository — the read model, stop,
// the live watcher — tells its own apart here (docs/security.md#the-same-story-id-in-two-repositories).

// In reports whether the run is one of the repository at root: by the
// repository it recorded (Root: a worker's and a runner's start, a
// dispatch), else by its worktree, else — a live worker that has recorded
// neither yet — by its working directory. A run that recorded none and is
// gone (one of saga-lsp before runs recorded their repository) counts as
// the repository's: nothing tells it apart.
func (r *Run) In(root string) bool {
	switch {
	case r.Root != "":
		return SamePath(r.Root, root)
	case r.Worktree != "" && r.Story != "":
		return SamePath(r.Worktree, store.WorktreeDir(root, r.Story)) || SamePath(r.Worktree, store.DryWorktreeDir(root, r.Story))
	case !r.Ended && r.PID > 0:
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(r.PID) + "/cwd")
		return err != nil || Within(root, cwd) // no /proc: nothing tells it apart
	}
	return true
}

// LatestIn is the newest run of a story or epic of the repository at root.
func LatestIn(dir string, k Kind, id, root string) *Run {
	return (*RunCache)(nil).LatestIn(dir, k, id, root)
}

// LatestIn is LatestIn through the cache.
func (c *RunCache) LatestIn(dir string, k Kind, id, root string) *Run {
	rs := Runs(dir, k, id)
	for i := len(rs) - 1; i >= 0; i-- {
		if r := c.Read(rs[i].EventsFile); r != nil && r.In(root) {
			return r
		}
	}
	return nil
}

// SamePath tells whether a and b name the same place, links resolved.
func SamePath(a, b string) bool {
	if a == b {
		return true // one name: no link to resolve (the common case, read at every story)
	}
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// Within tells whether path is root or under it, links resolved.
func Within(root, path string) bool {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
