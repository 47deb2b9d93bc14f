package git

import (
	"context"
	"slices"
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
	return fromCommit(cached, nameStatus(f.out)), nil
}

type res struct {
	out string
	err error
}

// Changes is what a worktree holds beside a commit (ChangesFrom).
type Changes struct {
	Tracked   map[string]string // as ChangedFrom
	Untracked []string          // untracked and not ignored, file by file
	Ignored   []string          // ignored; a folder ignored as a whole ends in "/"
}

// ChangesFrom is ChangedFrom with the untracked and the ignored files, from
// one walk of the worktree: commit against the index (`diff --cached`,
// which skips the folders the index's cache tree has as commit has them)
// and one `git status` — the index against the working files, the
// untracked and the ignored files (a folder that an ignore rule matches as
// one entry, not walked into). `git diff commit` and two `ls-files
// --others` walked the tree three times: at 100,000 files the comparison
// cost two walks beyond git's own status
// (docs/architecture.md#cost-follows-the-change-100000-files). Submodules
// are not looked into. The status takes no lock and writes no index: it
// runs beside other readers.
func (g Repo) ChangesFrom(ctx context.Context, commit string, paths ...string) (Changes, error) {
	spec := append([]string{"--"}, paths...)
	status := make(chan res, 1)
	go func() {
		out, err := g.Raw(ctx, append([]string{"--no-optional-locks", "status", "--porcelain=v2", "-z",
			"--untracked-files=all", "--ignored=matching", "--no-renames", "--ignore-submodules"}, spec...)...)
		status <- res{out, err}
	}()
	cached, err := g.Raw(ctx, append([]string{"diff", "--cached", "--no-renames", "--ignore-submodules", "--name-status", "-z", commit}, spec...)...)
	s := <-status
	if err != nil {
		return Changes{}, err
	}
	if s.err != nil {
		return Changes{}, s.err
	}
	var c Changes
	entries := StatusEntries(s.out)
	worktree := func(yield func(string, string) bool) {
		for _, e := range entries {
			if (e.Kind == '1' || e.Kind == 'u') && e.XY[1] != '.' && !yield(e.XY[1:], e.Path) {
				return
			}
		}
	}
	c.Tracked = fromCommit(cached, worktree)
	for _, e := range entries {
		switch e.Kind {
		case '?':
			c.Untracked = append(c.Untracked, e.Path)
		case '!':
			c.Ignored = append(c.Ignored, e.Path)
		}
	}
	return c, nil
}

// TrackedPaths are the tracked changes' paths, sorted.
func (c Changes) TrackedPaths() []string {
	out := make([]string, 0, len(c.Tracked))
	for p := range c.Tracked {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// fromCommit composes commit → index (cached, `--name-status -z`) with
// index → working files (worktree: status letter, path) into commit →
// working files.
func fromCommit(cached string, worktree func(func(string, string) bool)) map[string]string {
	out := map[string]string{}
	for st, p := range nameStatus(cached) {
		out[p] = st[:1]
	}
	for st, p := range worktree {
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
	return out
}

// StatusEntry is one entry of `git status --porcelain=v2 -z --no-renames`:
// Kind '1' (a tracked file changed), 'u' (unmerged), '?' (untracked) or
// '!' (ignored); XY the index's and the working file's letters ("" for
// '?' and '!').
type StatusEntry struct {
	Kind byte
	XY   string
	Path string
}

// StatusEntries parses `git status --porcelain=v2 -z --no-renames` output
// (headers and anything else skipped).
func StatusEntries(out string) []StatusEntry {
	var entries []StatusEntry
	for e := range strings.SplitSeq(out, "\x00") {
		// 1 XY sub mH mI mW hH hI path; u XY sub m1 m2 m3 mW h1 h2 h3 path; ? path; ! path
		if len(e) < 3 || e[1] != ' ' {
			continue
		}
		n := 0
		switch e[0] {
		case '1':
			n = 8
		case 'u':
			n = 10
		case '?', '!':
			entries = append(entries, StatusEntry{Kind: e[0], Path: e[2:]})
			continue
		default:
			continue
		}
		if parts := strings.SplitN(e, " ", n+1); len(parts) == n+1 && len(parts[1]) == 2 {
			entries = append(entries, StatusEntry{Kind: e[0], XY: parts[1], Path: parts[n]})
		}
	}
	return entries
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
