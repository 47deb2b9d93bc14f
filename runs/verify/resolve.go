package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Which checks count (docs/format.md#checks): those of the task file as committed
// where the story branch forked from its base — not the worktree's copy, not
// the branch's later commits, so an agent cannot weaken its own gate by
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
	for blocker, stacked := runs.StoryOfBranch(base); stacked && !seen[base]; blocker, stacked = runs.StoryOfBranch(base) {
		seen[base] = true
		rec, ok := runs.ReadRecord(root, blocker)
		if !ok || rec.Base == "" {
			return DefaultBranch(ctx, g)
		}
		base = rec.Base
	}
	if _, stacked := runs.StoryOfBranch(base); stacked { // a loop of records
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
// base: their merge-base, as a full hash. When origin has the base too and
// is further along, the fork from origin's copy counts (the worker starts
// a new story from it).
func ForkPoint(ctx context.Context, g git.Repo, head, base string) (string, error) {
	if head == "" {
		head = "HEAD"
	}
	fork, err := g.Run(ctx, "merge-base", head, base)
	if err != nil {
		return "", fmt.Errorf("find where %s forked from %s: %w", head, base, err)
	}
	if !strings.HasPrefix(base, "origin/") && g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+base) {
		if other, err := g.Run(ctx, "merge-base", head, "origin/"+base); err == nil && other != fork &&
			g.OK(ctx, "merge-base", "--is-ancestor", fork, other) {
			fork = other
		}
	}
	return fork, nil
}

// Manifest is what counts for a story's tasks: their checks read with git
// at the fork point (or the earliest story-branch commit adding the task).
// The worker writes it once per session (runs.ChecksFile), before any agent
// ran, where the agent's sandbox cannot write; the hook reads it instead of
// running git.
type Manifest struct {
	Story     string                `json:"story"`
	ForkPoint string                `json:"forkPoint"`
	Tasks     map[string]TaskChecks `json:"tasks"`
}

// TaskChecks are one task's checks as they count.
type TaskChecks struct {
	Commands []string `json:"commands,omitempty"`
	// TimeoutSeconds is per check.
	TimeoutSeconds float64 `json:"timeoutSeconds"`
	// From is the commit the task file was read at.
	From string `json:"from"`
	// Limits bound each check (zero ones: the defaults).
	Limits store.CheckLimits `json:"limits,omitzero"`
}

// Timeout is the per-check timeout.
func (t TaskChecks) Timeout() time.Duration {
	if t.TimeoutSeconds <= 0 {
		return store.DefaultCheckTimeout
	}
	return time.Duration(t.TimeoutSeconds * float64(time.Second))
}

// Budget is what the task's checks may take in all: the sum of their
// timeouts.
func (t TaskChecks) Budget() time.Duration {
	return time.Duration(len(t.Commands)) * t.Timeout()
}

// WriteManifest stores m at path, atomically.
func WriteManifest(path string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return store.WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// ReadManifest reads a manifest WriteManifest stored.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// FromSource reads the checks of a task file's bytes.
func FromSource(src []byte, from string) TaskChecks {
	doc := jsonc.Parse(src)
	checks, timeout := store.TaskChecks(doc.Root)
	tc := TaskChecks{TimeoutSeconds: timeout.Seconds(), From: from, Limits: store.TaskCheckLimits(doc.Root)}
	for _, c := range checks {
		tc.Commands = append(tc.Commands, c.Command)
	}
	return tc
}

// Resolve reads, with git in the story's worktree (or checkout) wt, the
// checks that count for the story's tasks: every task file of the story at
// fork, and those the story branch (HEAD's first-parent line since fork)
// added later, from the earliest commit adding each. only, when not nil,
// limits it to those task ids.
func Resolve(ctx context.Context, wt git.Repo, story, fork string, only []string) (*Manifest, error) {
	if !store.ValidCanonical(story) {
		return nil, fmt.Errorf("invalid story name %q", story)
	}
	m := &Manifest{Story: story, ForkPoint: fork, Tasks: map[string]TaskChecks{}}
	dir := store.StoryDirRel(story) + "/"
	want := func(rel string) (string, bool) {
		kind, owner, id := store.Classify(rel)
		if kind != store.KindTask || owner != story || (only != nil && !slices.Contains(only, id)) {
			return "", false
		}
		return id, true
	}
	// Where each task is read: at the fork point, else where it was added.
	at := map[string]string{} // task id → revision holding its file
	var order []string
	names, err := wt.Raw(ctx, "ls-tree", "-z", "--name-only", fork, "--", dir)
	if err != nil {
		return nil, fmt.Errorf("list %s at %s: %w", dir, Short(fork), err)
	}
	for _, rel := range strings.Split(names, "\x00") {
		if id, ok := want(rel); ok {
			at[id] = fork
			order = append(order, id)
		}
	}
	added, err := wt.Raw(ctx, "log", "--first-parent", "--reverse", "--diff-filter=A", "--name-only", "-z", "--format=%x01%H", fork+"..HEAD", "--", dir)
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
		if id, ok := want(field); ok && commit != "" && at[id] == "" {
			at[id] = commit
			order = append(order, id)
		}
	}
	if len(order) == 0 {
		return m, nil
	}
	var in bytes.Buffer
	for _, id := range order {
		fmt.Fprintf(&in, "%s:%s\n", at[id], path.Join(dir, id+".json"))
	}
	out, err := wt.RawInput(ctx, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read the task files: %w", err)
	}
	for _, id := range order {
		src, rest, err := nextBlob(out)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", path.Join(dir, id+".json"), Short(at[id]), err)
		}
		out = rest
		m.Tasks[id] = FromSource(src, at[id])
	}
	return m, nil
}

// nextBlob splits one answer of `git cat-file --batch` off out.
func nextBlob(out string) (blob []byte, rest string, err error) {
	header, rest, ok := strings.Cut(out, "\n")
	if !ok {
		return nil, "", errors.New("git cat-file ended early")
	}
	f := strings.Fields(header)
	if len(f) != 3 {
		return nil, "", fmt.Errorf("git cat-file: %s", header)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n > len(rest) {
		return nil, "", fmt.Errorf("git cat-file: bad header %q", header)
	}
	if n > store.MaxFileSize {
		return nil, "", fmt.Errorf("the file is over %d MB", store.MaxFileSize>>20)
	}
	return []byte(rest[:n]), strings.TrimPrefix(rest[n:], "\n"), nil
}

// Short is a commit hash as messages show it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Where is where checks run for a story outside a worker run (`saga-lsp
// verify`), and the fork point that decides which count: the story's
// worktree when it exists (its fork from the base of the story's last run,
// followed to the epic's base — or the default branch), else the checkout
// (its HEAD's fork from the default branch).
type Where struct {
	Dir       string // the worktree or the checkout
	Worktree  bool
	Base      string
	ForkPoint string
}

// Locate finds Where for story in the repository at root.
func Locate(ctx context.Context, root, story string) (Where, error) {
	w := Where{Dir: root}
	repo := git.Repo{Dir: root}
	if wt := store.WorktreeDir(root, story); exists(filepath.Join(wt, ".git")) {
		w.Dir, w.Worktree = wt, true
	}
	base := ""
	if rec, ok := runs.ReadRecord(root, story); ok && w.Worktree {
		base = rec.Base
	}
	if base == "" {
		base = DefaultBranch(ctx, repo)
	}
	w.Base = EpicBase(ctx, repo, root, base)
	fork, err := ForkPoint(ctx, git.Repo{Dir: w.Dir}, "HEAD", w.Base)
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
	src, problem := store.ReadBounded(filepath.Join(dir, filepath.FromSlash(rel)), rel)
	if problem != "" {
		return TaskChecks{}, false
	}
	return FromSource(src, WorkingTree), true
}

// WorkingTree is TaskChecks.From for checks read from a file not committed.
const WorkingTree = "the working tree"
