package verify

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Which checks count (docs/format.md#checks): those of the task file as committed
// at the run's reference commit R — the base's tip when the run started,
// which the worker makes the story branch's fork point (runs.Record's
// Reference) — not the worktree's copy, not the branch's later commits, not
// a ref an agent could move, so an agent cannot weaken its own gate by
// editing the file or by getting the edit committed. A task absent at the
// fork point (a story planned on its own branch) takes its checks from the
// earliest commit of the story branch's own line (first parents) that adds
// it.

// EpicBase is the branch a story's chain of bases starts from: base itself,
// or for a stacked story (base story/<x>, a blocker's branch) the base that
// story's last run recorded (runs.Record), followed until a branch that is
// not a story's — never a blocker's branch, whose commits another agent
// made. When a record is missing, the repository's default branch.
func EpicBase(ctx context.Context, g git.Repo, root, base string) string {
	seen := map[string]bool{}
	for blocker, dry, stacked := runs.StoryOfRunBranch(base); stacked && !seen[base]; blocker, dry, stacked = runs.StoryOfRunBranch(base) {
		seen[base] = true
		rec, ok := runs.ReadRecord(root, blocker)
		if dry { // a dry run stacked on a blocker's dry run
			rec, ok = runs.ReadDryRecord(root, blocker)
		}
		if !ok || rec.Base == "" {
			return DefaultBranch(ctx, g)
		}
		base = rec.Base
	}
	if _, _, stacked := runs.StoryOfRunBranch(base); stacked { // a loop of records
		return DefaultBranch(ctx, g)
	}
	return base
}

// DefaultBranch is the repository's default branch: origin's HEAD, else
// init.defaultBranch, else main or master, whichever exists ("main" when
// none does).
func DefaultBranch(ctx context.Context, g git.Repo) string {
	if ref, err := g.Run(ctx, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil && ref != "" {
		if b := strings.TrimPrefix(ref, "origin/"); g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+b) {
			return b
		}
		return ref
	}
	candidates := []string{"main", "master"}
	if b, err := g.Run(ctx, "config", "init.defaultBranch"); err == nil && b != "" {
		candidates = append([]string{b}, candidates...)
	}
	for _, b := range candidates {
		if g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+b) {
			return b
		}
	}
	return "main"
}

// ForkPoint is the commit where head (a story branch, or HEAD) forked from
// base: their merge-base, as a full hash. base is taken as given — a
// remote-tracking ref is never preferred on its own: nothing says who
// moved it last (Locate fetches one before it trusts it).
func ForkPoint(ctx context.Context, g git.Repo, head, base string) (string, error) {
	if head == "" {
		head = "HEAD"
	}
	fork, err := g.Run(ctx, "merge-base", head, base)
	if err != nil {
		return "", fmt.Errorf("find where %s forked from %s: %w", head, base, err)
	}
	return fork, nil
}

// Manifest is what counts for a story's tasks (runs.ChecksManifest, the
// format the worker and the hook share).
type Manifest = runs.ChecksManifest

// TaskChecks are one task's checks as they count (runs.TaskChecks).
type TaskChecks = runs.TaskChecks

// FromSource reads the checks of a task file's bytes.
func FromSource(src []byte, from string) TaskChecks {
	doc := jsonc.Parse(src)
	checks, timeout := store.TaskChecks(doc.Root)
	tc := TaskChecks{TimeoutSeconds: timeout.Seconds(), From: from, Limits: store.TaskCheckLimits(doc.Root), Protection: store.TaskProtection(doc.Root)}
	for _, c := range checks {
		tc.Commands = append(tc.Commands, c.Command)
	}
	return tc
}

// Resolve reads, with git in the story's worktree (or checkout) wt, the
// checks that count for the story's tasks: every task file of the story at
// fork (a full commit hash: the run's reference commit), and those the
// story branch (HEAD's first-parent line since fork) added later, from the
// earliest commit adding each. Every file is read with its objects checked
// against the commit's hash (git.Repo.FilesAt), so nothing planted in the
// repository's object store passes for it. only, when not nil, limits it
// to those task ids.
func Resolve(ctx context.Context, wt git.Repo, story, fork string, only []string) (*Manifest, error) {
	if !store.ValidCanonical(story) {
		return nil, fmt.Errorf("invalid story name %q", story)
	}
	m := &Manifest{Story: story, ForkPoint: fork, Tasks: map[string]TaskChecks{}}
	dir := store.StoryDirRel(story)
	want := func(rel string) (string, bool) {
		kind, owner, id := store.Classify(rel)
		if kind != store.KindTask || owner != story || (only != nil && !slices.Contains(only, id)) {
			return "", false
		}
		return id, true
	}
	read := func(commit string) (map[string][]byte, error) {
		files, err := wt.FilesAt(ctx, commit, dir)
		if err != nil {
			return nil, fmt.Errorf("read %s/ at %s: %w", dir, Short(commit), err)
		}
		for name, src := range files {
			if len(src) > filesafe.MaxFileSize {
				return nil, fmt.Errorf("read %s/%s at %s: the file is over %d MB", dir, name, Short(commit), filesafe.MaxFileSize>>20)
			}
		}
		return files, nil
	}
	files, err := read(fork)
	if err != nil {
		return nil, err
	}
	for name, src := range files {
		if id, ok := want(path.Join(dir, name)); ok {
			m.Tasks[id] = FromSource(src, fork)
		}
	}
	added, err := wt.Raw(ctx, "log", "--first-parent", "--reverse", "--diff-filter=A", "--name-only", "-z", "--format=%x01%H", fork+"..HEAD", "--", dir+"/")
	if err != nil {
		return nil, fmt.Errorf("list the tasks the story branch added since %s: %w", Short(fork), err)
	}
	commit := ""
	for _, field := range strings.Split(added, "\x00") {
		field = strings.TrimLeft(field, "\n")
		if h, ok := strings.CutPrefix(field, "\x01"); ok {
			commit, field = h, ""
			if i := strings.IndexByte(commit, '\n'); i >= 0 { // the first name follows the format line
				commit, field = commit[:i], strings.TrimLeft(commit[i:], "\n")
			}
		}
		id, ok := want(field)
		if !ok || commit == "" {
			continue
		}
		if _, done := m.Tasks[id]; done {
			continue
		}
		files, err := read(commit)
		if err != nil {
			return nil, err
		}
		if src, ok := files[id+".json"]; ok {
			m.Tasks[id] = FromSource(src, commit)
		}
	}
	return m, nil
}

// Short is a commit hash as messages show it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Where is where checks run for a story outside a worker run (`saga-lsp
// verify`), and the commit that decides which count: the story's worktree
// when it exists, else the checkout; the reference commit R its last run
// recorded (runs.Record) when Dir's HEAD holds it, else the fork of HEAD
// from the base (the base of the story's last run, followed to the epic's
// base — or the default branch).
type Where struct {
	Dir       string // the worktree or the checkout
	Worktree  bool
	Base      string
	ForkPoint string
	Recorded  bool // ForkPoint is the last run's recorded reference commit
}

// Locate finds Where for story in the repository at root. It never trusts a
// remote-tracking ref it did not fetch itself: without a recorded reference
// commit the fork is taken from the local base branch, and where there is
// none, from origin's fetched now.
func Locate(ctx context.Context, root, story string) (Where, error) {
	w := Where{Dir: root}
	repo := git.Repo{Dir: root}
	if wt := store.WorktreeDir(root, story); exists(filepath.Join(wt, ".git")) {
		w.Dir, w.Worktree = wt, true
	}
	here := git.Repo{Dir: w.Dir}
	rec, haveRec := runs.ReadRecord(root, story)
	base := ""
	if haveRec && w.Worktree {
		base = rec.Base
	}
	if base == "" {
		base = DefaultBranch(ctx, repo)
	}
	w.Base = EpicBase(ctx, repo, root, base)
	if haveRec && rec.Reference != "" {
		if c, err := here.Commit(ctx, rec.Reference); err == nil && c == rec.Reference && here.OK(ctx, "merge-base", "--is-ancestor", c, "HEAD") {
			w.ForkPoint, w.Recorded = c, true
			return w, nil
		}
	}
	local := strings.TrimPrefix(w.Base, "origin/")
	trusted := w.Base
	switch {
	case repo.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+local):
		trusted = "refs/heads/" + local
	case repo.HasRemote(ctx):
		if _, err := repo.Retry(ctx, "fetch", "--no-tags", "origin", "+refs/heads/"+local+":refs/remotes/origin/"+local); err != nil {
			return w, fmt.Errorf("there is no local branch %s and fetching it from origin failed (%v): create the branch or fetch it", local, err)
		}
		trusted = "refs/remotes/origin/" + local
	}
	fork, err := ForkPoint(ctx, here, "HEAD", trusted)
	if err != nil {
		return w, err
	}
	w.ForkPoint = fork
	return w, nil
}

// WorkingCopy reads a task's checks from its file in dir (a story not yet
// committed has nothing else: a worker would commit this file on the story
// branch, where it would count). found is false when there is no such
// file.
func WorkingCopy(dir, story, task string) (tc TaskChecks, found bool) {
	rel := store.TaskFileRel(story, task)
	src, problem := filesafe.ReadBounded(filepath.Join(dir, filepath.FromSlash(rel)), rel)
	if problem != "" {
		return TaskChecks{}, false
	}
	return FromSource(src, WorkingTree), true
}

// WorkingTree is TaskChecks.From for checks read from a file not committed.
const WorkingTree = "the working tree"
