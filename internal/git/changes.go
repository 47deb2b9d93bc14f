package git

import (
	"context"
	"strings"
)

// ChangedFrom lists the tracked files under paths whose working copy
// differs from commit: path → "M", "D" or "A" (what the worktree did to
// commit's version; untracked files are not listed), like `git diff
// --name-status commit -- paths`. It asks git twice — commit against the
// index (`diff --cached`), the index against the working files
// (`diff-files`) — because git's own one-step form (diff-index without
// --cached) given a pathspec below the top can walk pathologically on a
// large index: 4 minutes, and every retry over 20 s, in a fresh worktree of
// 100,000 files, where these took half a second each (git 2.39;
// docs/architecture.md#cost-follows-the-change-100000-files).
func (g Repo) ChangedFrom(ctx context.Context, commit string, paths ...string) (map[string]string, error) {
	spec := append([]string{"--"}, paths...)
	type res struct {
		out string
		err error
	}
	files := make(chan res, 1)
	go func() {
		out, err := g.Raw(ctx, append([]string{"diff-files", "--no-renames", "--name-status", "-z"}, spec...)...)
		files <- res{out, err}
	}()
	cached, err := g.Raw(ctx, append([]string{"diff", "--cached", "--no-renames", "--name-status", "-z", commit}, spec...)...)
	f := <-files
	if err != nil {
		return nil, err
	}
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]string{}
	for st, p := range nameStatus(cached) {
		out[p] = st[:1]
	}
	for st, p := range nameStatus(f.out) {
		switch prev, had := out[p]; {
		case st[0] != 'D':
			if !had {
				out[p] = "M"
			}
		case prev == "A":
			delete(out, p) // added in the index, gone from the worktree: as commit
		default:
			out[p] = "D"
		}
	}
	return out, nil
}

// nameStatus yields the (status, path) pairs of `--name-status -z` output
// without renames.
func nameStatus(out string) func(func(string, string) bool) {
	return func(yield func(string, string) bool) {
		fields := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] != "" && !yield(fields[i], fields[i+1]) {
				return
			}
		}
	}
}
