package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// The agent's work reaches the PR whether or not the model commits: after
// every headless run the worker commits what the agent left in the worktree
// (tracked and untracked, .gitignore respected) and pushes it. What must
// never be committed is kept out by the worktree's own exclude file, so
// that "clean" means everything else is committed. In .saga/ only the
// story's journal and the statuses the hook wrote are the agent's to
// change: anything else it changed there (by Bash, which the scope hook
// cannot see) is reverted and reported.

// agentExcludes are the exclude patterns of a story worktree: saga-lsp's
// own temp files, Claude Code's per-project configuration, and the
// placeholder files the Bash sandbox (bubblewrap) leaves in the working
// directory.
func agentExcludes() []string {
	return []string{
		"# saga-lsp: never committed from a story worktree",
		filesafe.TempFilePattern,
		"/.claude/",
		"/.mcp.json",
		"/.bash_profile", "/.bash_login", "/.bash_logout", "/.bashrc", "/.profile",
		"/.zshrc", "/.zprofile", "/.zshenv", "/.gitconfig", "/.ripgreprc",
	}
}

// excludeAgentFiles gives the worktree its own exclude file (git reads a
// per-worktree core.excludesFile once extensions.worktreeConfig is on): the
// user's global excludes plus agentExcludes. The main checkout's excludes
// are left as they are.
func (r *run) excludeAgentFiles(ctx context.Context) error {
	gitDir, err := r.wtGit.Run(ctx, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if global := r.globalExcludes(ctx); global != "" {
		if data, err := os.ReadFile(global); err == nil {
			b.Write(data)
			if len(data) > 0 && data[len(data)-1] != '\n' {
				b.WriteByte('\n')
			}
		}
	}
	b.WriteString(strings.Join(agentExcludes(), "\n") + "\n")
	// Written at every start before git reads it, so it need not survive
	// a crash: without fsync. The first fsync after a 100,000-file
	// checkout paid the file system's journal commit of the checkout
	// (0.2–0.3 s; docs/architecture.md#cost-follows-the-change-100000-files).
	dir, err := filesafe.OpenBeneath(gitDir)
	if err != nil {
		return err
	}
	defer dir.Close()
	dir.NoSync = true
	if err := dir.WriteFileAtomic(excludeFileName, b.Bytes(), 0o644); err != nil {
		return err
	}
	file := filepath.Join(gitDir, excludeFileName)
	// The writes run uncancellably: git killed while it writes a config
	// leaves config.lock behind, and every later config write of the
	// repository — the user's too — then fails until someone removes it
	// (seen when a worker was stopped during set-up). Each is short.
	wctx := context.WithoutCancel(ctx)
	// Written once per repository (the workers of an epic share it).
	if on, _ := r.repo.Run(ctx, "config", "--bool", "extensions.worktreeConfig"); on != "true" {
		if _, err := r.repo.Retry(wctx, "config", "extensions.worktreeConfig", "true"); err != nil {
			return err
		}
	}
	_, err = r.wtGit.Retry(wctx, "config", "--worktree", "core.excludesFile", file)
	return err
}

// excludeFileName is the worktree's exclude file, in its git dir.
const excludeFileName = "saga-exclude"

// globalExcludes is the user's global excludes file, as git finds it.
func (r *run) globalExcludes(ctx context.Context) string {
	if p, err := r.repo.Run(ctx, "config", "--global", "--path", "core.excludesFile"); err == nil && p != "" {
		return p
	}
	if x := r.o.Env("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := r.o.Env("HOME"); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}

// commitWork commits what the agent left in the worktree (after guarding
// .saga/ and, with reconcile, taking the statuses from the task list again
// for the files it reverted) with a message naming the story and the tasks
// completed since the last commit, and pushes the branch. It returns ""
// when the branch holds everything the agent left — committed, pushed where
// there is a remote (not in a dry run), the worktree clean — else what
// failed and what to do, as also logged.
func (r *run) commitWork(ctx context.Context, what string, reconcile bool) (problem string) {
	if err := r.ensureHead(ctx, runs.StepCommit); err != nil {
		return r.commitProblem("commit", err)
	}
	if err := r.guardSaga(ctx); err != nil {
		return r.commitProblem("guard", err)
	}
	if reconcile {
		r.reconcile(ctx)
	}
	left, err := r.leftBehind(ctx)
	if err != nil {
		return r.commitProblem("git status", err)
	}
	if err := r.addLeft(ctx, left); err != nil {
		return r.commitProblem("staging", fmt.Errorf("%w — the agent left something git cannot commit", err))
	}
	msg := r.commitMessage(what, r.committed)
	commit, err := r.commitIndex(ctx, msg)
	if err != nil {
		return r.commitProblem("commit", err)
	}
	if commit != "" {
		r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepCommit, Branch: r.branch, Message: msg},
			fmt.Sprintf("commit: %s (%d files)", msg, len(left)))
		r.committed = r.statuses()
	}
	if err := r.push(ctx); err != nil {
		return r.commitProblem("push", err)
	}
	if status, err := r.stillLeft(ctx, left); err != nil || status != "" {
		return r.commitProblem("commit", fmt.Errorf("the worktree is not clean after the commit: %s", firstLine(status, err)))
	}
	return ""
}

// Cost follows the change (docs/architecture.md#speed): one status of the
// whole worktree lists what the agent left; git add and the check that the
// worktree is clean afterwards look at those paths only. At 100,000 files
// `git add -A` and `git status` each cost a walk of the tree, the floor the
// commit is measured against.

// maxNamedPaths is how many paths the clean check names on git's command
// line; beyond it, it checks the whole worktree.
const maxNamedPaths = 1000

// leftBehind lists the paths whose working copy differs from the index or
// that are untracked and not ignored (a rename's both paths).
func (r *run) leftBehind(ctx context.Context) ([]string, error) {
	out, err := r.wtGit.Raw(ctx, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range git.StatusEntries(out) {
		if e.Kind != '!' {
			paths = append(paths, e.Path)
		}
	}
	return paths, nil
}

// addLeft stages exactly the paths given — what the status listed: changed
// tracked files, untracked ones not ignored — deletions included. `git
// update-index` takes each path as it is (a name with * or : is a name)
// and reads nothing else: `git add -A` given the same paths also read
// their folders again for untracked files and hashed every name of the
// index (0.1 s at 100,000 files on a loaded machine). A folder the status
// lists whole (an untracked repository) is left to git add.
func (r *run) addLeft(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	input := []byte(strings.Join(paths, "\x00") + "\x00")
	if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, "/") }) {
		_, err := r.wtGit.RawInput(ctx, input, "update-index", "--add", "--remove", "-z", "--stdin")
		return err
	}
	_, err := r.wtGit.RawInput(ctx, input, "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// stillLeft is what differs from the commit of the paths it took in (the
// short status of the whole worktree when they are many): "" when all of
// them are committed. The paths are in the index as committed, so what can
// differ is a working file changed since. A path whose file is byte for
// byte the branch tip's blob (git.Repo.CommittedAsIs: the tip's trees and
// the files, not the index) is committed; git is asked about the others:
// `git diff` of those paths (which compares a file whose stat changed by
// its content), where `git status` also compared HEAD with the index and
// read the paths' folders for untracked files.
func (r *run) stillLeft(ctx context.Context, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", nil
	}
	if len(paths) > maxNamedPaths {
		return r.wtGit.Run(ctx, "status", "--porcelain")
	}
	if wt, err := filesafe.OpenBeneath(r.wt); err == nil {
		asIs, err := r.wtGit.CommittedAsIs(ctx, r.branchRef(), wt, paths)
		wt.Close()
		if err == nil {
			paths = slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return asIs[p] })
			if len(paths) == 0 {
				return "", nil
			}
		}
	}
	return r.wtGit.Run(ctx, append([]string{"--literal-pathspecs", "--no-optional-locks", "diff", "--no-ext-diff", "--no-renames", "--name-status", "--"}, paths...)...)
}

// commitProblem logs a failed step of committing the work and returns it,
// with what to do.
func (r *run) commitProblem(step string, err error) string {
	todo := fmt.Sprintf("see `git -C %s status`, fix what it shows, then run the story again (`saga-lsp run %s`)", r.wt, r.o.Story)
	if step == "push" {
		todo = fmt.Sprintf("push it yourself (`git -C %s push -u origin %s`) or run the story again (`saga-lsp run %s`)", r.wt, r.branch, r.o.Story)
	}
	p := fmt.Sprintf("%s failed: %v; %s", step, err, todo)
	r.j.Warn(runs.StepCommit, "%s", p)
	return p
}

// commitMessage names the story and what completed since before.
func (r *run) commitMessage(what string, before map[string]string) string {
	var done []string
	if s, err := r.story(); err == nil {
		for _, t := range s.Tasks {
			if t.Status == store.StatusCompleted && before[t.ID] != store.StatusCompleted {
				done = append(done, t.ID)
			}
		}
	}
	slices.Sort(done)
	msg := fmt.Sprintf("saga(%s): %s", r.o.Story, what)
	if len(done) > 0 {
		msg += " — completed " + strings.Join(done, ", ")
	}
	return msg
}

// push pushes the story branch when there is a remote (never in a dry
// run).
func (r *run) push(ctx context.Context) error {
	if r.o.DryRun || !r.remote {
		return nil // nowhere to push to
	}
	_, err := r.wtGit.Retry(ctx, r.pushArgs(ctx)...)
	return err
}

// statuses is every task's status in the worktree copy.
func (r *run) statuses() map[string]string {
	out := map[string]string{}
	if s, err := r.story(); err == nil {
		for _, t := range s.Tasks {
			out[t.ID] = t.Status
		}
	}
	return out
}

// guardSaga reverts what the agent changed in .saga/ beyond its story's
// journal and the status values of its task files, and reports it in the
// log and the journal.
func (r *run) guardSaga(ctx context.Context) error {
	if err := r.guardStoryFolder(ctx); err != nil {
		return err // reverting now would put back what the branch holds
	}
	out, err := r.wtGit.Raw(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".saga")
	if err != nil || out == "" {
		return nil
	}
	storyDir := store.StoryDirRel(r.o.Story) + "/"
	type change struct {
		code, rel  string
		statusOnly bool // a story file whose change may be a status alone
	}
	var changes []change
	var statusOnly []string
	entries := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		code, rel := e[:2], e[3:]
		if code[0] == 'R' || code[0] == 'C' { // the source path follows
			i++
		}
		if rel == store.JournalFileRel(r.o.Story) {
			continue
		}
		c := change{code, rel, strings.HasPrefix(rel, storyDir) && code != "??" && code[1] != 'D' && path.Dir(rel)+"/" == storyDir}
		changes = append(changes, c)
		if c.statusOnly {
			statusOnly = append(statusOnly, rel)
		}
	}
	// The branch's copies of those files in one git process, not two a
	// file (a task completed is a file changed; docs/architecture.md#cost-follows-the-change-100000-files).
	// Unreadable, they are reverted, as a file the branch lacks.
	var onBranch map[string]git.Blob
	if len(statusOnly) > 0 {
		var err error
		if onBranch, err = r.wtGit.BlobsAtRef(ctx, r.branchRef(), statusOnly); err != nil {
			r.j.Warn(runs.StepCommit, "read the story's files on %s: %v", r.branch, err)
		}
	}
	var reverted []string
	for _, c := range changes {
		if head, ok := onBranch[c.rel]; ok && c.statusOnly && r.keepFieldChanges(c.rel, head.Data) {
			continue
		}
		if err := r.revert(ctx, c.rel, c.code); err != nil {
			r.j.Warn(runs.StepCommit, "revert %s: %v", termtext.Escape(c.rel), err)
			continue
		}
		reverted = append(reverted, c.rel)
	}
	if len(reverted) == 0 {
		return nil
	}
	msg := fmt.Sprintf("reverted changes the agent made in .saga/ outside its journal and task statuses: %s", names(reverted))
	r.j.Warn(runs.StepCommit, "%s", msg)
	r.journalNote(msg)
	return nil
}

// guardStoryFolder keeps the worktree's story folder a folder of regular
// files: .saga, .saga/stories and the story's folder must be folders, not
// links, and nothing in the story's folder may be a link, FIFO, socket or
// device (a journal linked to a file outside, a task file made a FIFO or a
// link to /dev/zero). Such an entry is removed — the link itself, never
// what it points to — put back from the story branch when the branch has a
// file or folder there, and reported. The worker's own reads and writes
// refuse such files anyway (filesafe.ReadInside); this keeps them off the
// branch, and the story readable. When the branch itself holds a link (or
// a submodule) there — the repository's content, not the agent's — it is
// never put back, and the error says what to change: the run cannot go on
// with a story it may not read (docs/security.md#the-workers-reads-and-writes).
func (r *run) guardStoryFolder(ctx context.Context) error {
	var removed, restored, committed []string
	drop := func(rel, kind string) {
		onBranch, err := r.wtGit.KindAtRef(ctx, r.branchRef(), rel)
		if err != nil {
			r.j.Warn(runs.StepCommit, "read %s on %s: %v", termtext.Escape(rel), r.branch, err)
		}
		if err := filesafe.RemoveInside(r.wt, rel); err != nil {
			r.j.Warn(runs.StepCommit, "remove %s: %v", termtext.Escape(rel), err)
			return
		}
		switch onBranch {
		case git.LinkOrSubmodule:
			committed = append(committed, termtext.Escape(rel))
			return
		case git.RegularFile, git.Folder:
			removed = append(removed, termtext.Escape(rel)+" ("+kind+")")
			if _, err := r.wtGit.Run(ctx, "checkout", r.branchRef(), "--", rel); err != nil {
				r.j.Warn(runs.StepCommit, "restore %s: %v", termtext.Escape(rel), err)
				return
			}
			restored = append(restored, termtext.Escape(rel))
		default:
			removed = append(removed, termtext.Escape(rel)+" ("+kind+")")
		}
	}
	dir := ""
	chain := true
	for _, part := range []string{".saga", "stories", r.o.Story} {
		dir = path.Join(dir, part)
		fi, err := os.Lstat(filepath.Join(r.wt, filepath.FromSlash(dir)))
		if err != nil {
			chain = false // missing: the status pass restores what the branch has
			break
		}
		if !fi.IsDir() {
			drop(dir, filesafe.FileTypeName(fi.Mode()))
			chain = false
			break
		}
	}
	if chain {
		des, _ := os.ReadDir(filepath.Join(r.wt, filepath.FromSlash(dir)))
		for _, de := range des {
			if t := de.Type(); !t.IsRegular() && !t.IsDir() {
				drop(path.Join(dir, de.Name()), filesafe.FileTypeName(t))
			}
		}
	}
	if len(removed) > 0 {
		msg := fmt.Sprintf("removed what the agent made in its story's folder that is not a plain folder or file: %s", strings.Join(removed, ", "))
		if len(restored) > 0 {
			msg += fmt.Sprintf("; restored from %s: %s", r.branch, strings.Join(restored, ", "))
		}
		r.j.Warn(runs.StepCommit, "%s", msg)
		r.journalNote(msg)
	}
	if len(committed) > 0 {
		return fmt.Errorf("%s holds links or submodules where the story's files are: %s; a worker never follows or restores them — "+
			"commit regular files there instead (where the branch came from, then `saga-lsp reset %s --yes`) and run the story again (docs/security.md#the-workers-reads-and-writes)",
			r.branch, strings.Join(committed, ", "), r.o.Story)
	}
	return nil
}

// names lists paths for the log and the journal, each escaped: a name the
// agent chose never brings a newline or a control character into either.
func names(rels []string) string {
	return strings.Join(termtext.Escapes(rels), ", ")
}

// keepFieldChanges tells whether a story file differs from the branch's
// copy (onBranch) only in the member the worker and the hook write
// (status). When it differs in more, the file is restored to the branch's
// with those members kept, and false is returned. The file is read without
// following a link and bounded.
func (r *run) keepFieldChanges(rel string, onBranch []byte) bool {
	cur, err := filesafe.ReadInside(r.wt, rel)
	if err != nil || len(onBranch) > filesafe.MaxFileSize {
		return false // reverted from the branch
	}
	head := string(onBranch)
	// Only a status is the run's: the agent's edits to the fields older
	// workers wrote (store.RunFields) are reverted too
	// (docs/worker.md#definitions-on-the-branch).
	fields := []string{"status"}
	var curV, headV map[string]any
	if json.Unmarshal(cur, &curV) == nil && json.Unmarshal([]byte(head), &headV) == nil {
		kept := map[string]any{}
		for _, k := range fields {
			if v, ok := curV[k].(string); ok {
				kept[k] = v
			}
			delete(curV, k)
			delete(headV, k)
		}
		if reflect.DeepEqual(curV, headV) {
			return true
		}
		restored := []byte(head)
		for _, k := range fields {
			if v, ok := kept[k].(string); ok {
				if next, err := store.SetString(restored, k, v); err == nil {
					restored = next
				}
			}
		}
		head = string(restored)
	}
	if err := filesafe.WriteFileBeneath(r.wt, rel, []byte(head), 0o644); err != nil {
		r.j.Warn(runs.StepCommit, "restore %s: %v", termtext.Escape(rel), err)
	}
	return false
}

// revert restores a path of the worktree to the branch's (a new file is
// removed: the entry itself, never through a link).
func (r *run) revert(ctx context.Context, rel, code string) error {
	if code == "??" || code[0] == 'A' {
		if code[0] == 'A' {
			if _, err := r.wtGit.Run(ctx, "rm", "-q", "--cached", "--", rel); err != nil {
				return err
			}
		}
		return filesafe.RemoveInside(r.wt, rel)
	}
	_, err := r.wtGit.Run(ctx, "checkout", r.branchRef(), "--", rel)
	return err
}

// journalNote appends a worker entry to the story's journal, never through
// a link and never to anything but a regular file (filesafe.AppendInside).
func (r *run) journalNote(text string) {
	note := fmt.Sprintf("\n## %s worker note\n%s\n", r.o.Now().UTC().Format(time.RFC3339), text)
	if err := filesafe.AppendInside(r.wt, store.JournalFileRel(r.o.Story), []byte(note)); err != nil {
		r.j.Warn(runs.StepCommit, "journal: %v", err)
	}
}

// readJournal reads the story's journal in the worktree as journalNote
// writes it: nil when there is none; a journal that cannot be read is
// reported and taken as empty.
func (r *run) readJournal(step string) []byte {
	data, err := filesafe.ReadInside(r.wt, store.JournalFileRel(r.o.Story))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.j.Warn(step, "journal: %v", err)
	}
	return data
}
