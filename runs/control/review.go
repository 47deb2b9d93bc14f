package control

// Reviewing a story's work before its PR is opened in a browser: the files
// its branch changed against the base it started from, for the editors'
// diff views (the language server's reviewStory).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Review is a story branch's changes against its base.
type Review struct {
	Story    string        `json:"story"`
	Branch   string        `json:"branch"`
	Base     string        `json:"base"`
	Repo     string        `json:"repo"`     // the repository's top-level folder: Files' paths are relative to it
	Worktree string        `json:"worktree"` // the story's worktree while it exists, else ""
	Files    []ChangedFile `json:"files"`
	// DryRun: the story has no attempt of its own, and this is what its dry
	// run did (saga-dry/<story>: docs/worker.md#dry-runs).
	DryRun bool `json:"dryRun,omitempty"`
}

// ChangedFile is one file the branch changed.
type ChangedFile struct {
	Path    string `json:"path"`
	Status  string `json:"status"` // added, modified, deleted, renamed, copied, typechange
	OldPath string `json:"oldPath,omitempty"`
}

// ReviewOptions configure ReviewStory.
type ReviewOptions struct {
	Root       string
	Story      string
	SessionDir string
	Env        func(string) string
}

// ReviewStory lists the files story/<story> changed since it left its base:
// the base its last run started from (a stacked story's is its blocker's
// branch, so only its own work shows), else the main checkout's branch.
func ReviewStory(ctx context.Context, o ReviewOptions) (*Review, error) {
	if !store.ValidCanonical(o.Story) {
		return nil, store.Usagef("invalid story name %q", o.Story)
	}
	if o.SessionDir == "" {
		o.SessionDir = runs.SessionDir(o.Env)
	}
	g := git.Repo{Dir: o.Root}
	branch, dry := runs.StoryBranch(o.Story), false
	if !g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) && g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+runs.DryBranch(o.Story)) {
		branch, dry = runs.DryBranch(o.Story), true // only a dry run: what it did, labelled
	}
	if !g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		return nil, store.Usagef("story %s has no branch %s in %s: nothing to review until it runs (`saga-lsp run %s`)", o.Story, branch, o.Root, o.Story)
	}
	top, err := g.Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	base := reviewBase(ctx, g, o, dry)
	if base == "" {
		return nil, fmt.Errorf("story %s: no base to compare %s with: the repository has no current branch and no run recorded one", o.Story, branch)
	}
	out, err := g.Raw(ctx, "diff", "--name-status", "-z", "-M", "--no-color", base+"..."+branch, "--")
	if err != nil {
		return nil, err
	}
	r := &Review{Story: o.Story, Branch: branch, Base: base, Repo: top, Files: parseNameStatus(out), DryRun: dry}
	wt := store.RunWorktreeDir(o.Root, o.Story, dry)
	if fi, err := os.Stat(wt); err == nil && fi.IsDir() {
		r.Worktree = filepath.Clean(wt)
	}
	return r, nil
}

// reviewBase is the base of the story's last run (its record, else its
// newest events file) while that branch exists, else the current branch.
func reviewBase(ctx context.Context, g git.Repo, o ReviewOptions, dry bool) string {
	var candidates []string
	rec, ok := runs.ReadRecord(o.Root, o.Story)
	if dry {
		rec, ok = runs.ReadDryRecord(o.Root, o.Story)
	}
	if ok {
		candidates = append(candidates, rec.Base)
	}
	if last := runs.LatestIn(o.SessionDir, runs.KindStory, o.Story, o.Root); last != nil && last.DryRun == dry {
		candidates = append(candidates, last.Base)
	}
	for _, b := range candidates {
		if b != "" && g.OK(ctx, "rev-parse", "--verify", "--quiet", b+"^{commit}") {
			return b
		}
	}
	b, _ := g.Run(ctx, "symbolic-ref", "--short", "HEAD")
	return b
}

// parseNameStatus reads `git diff --name-status -z`: a status, then one
// path (two for renames and copies), each NUL-terminated.
func parseNameStatus(out string) []ChangedFile {
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	files := []ChangedFile{}
	for i := 0; i+1 < len(fields); {
		code := fields[i]
		f := ChangedFile{Path: fields[i+1]}
		i += 2
		switch {
		case strings.HasPrefix(code, "A"):
			f.Status = "added"
		case strings.HasPrefix(code, "D"):
			f.Status = "deleted"
		case strings.HasPrefix(code, "T"):
			f.Status = "typechange"
		case strings.HasPrefix(code, "R"), strings.HasPrefix(code, "C"):
			f.Status = "renamed"
			if code[0] == 'C' {
				f.Status = "copied"
			}
			if i < len(fields) {
				f.OldPath, f.Path = f.Path, fields[i]
				i++
			}
		default:
			f.Status = "modified"
		}
		files = append(files, f)
	}
	return files
}
