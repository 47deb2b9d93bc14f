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
		store.TempFilePattern,
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
	file := filepath.Join(gitDir, "saga-exclude")
	if err := store.WriteFileAtomic(file, b.Bytes(), 0o644); err != nil {
		return err
	}
	// Written once per repository (the workers of an epic share it).
	if on, _ := r.repo.Run(ctx, "config", "--bool", "extensions.worktreeConfig"); on != "true" {
		if _, err := r.repo.Retry(ctx, "config", "extensions.worktreeConfig", "true"); err != nil {
			return err
		}
	}
	_, err = r.wtGit.Retry(ctx, "config", "--worktree", "core.excludesFile", file)
	return err
}

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
// completed since the last commit, and pushes the branch. It reports
// whether the branch is pushed and the worktree clean.
func (r *run) commitWork(ctx context.Context, what string, reconcile bool) (clean bool) {
	r.guardSaga(ctx)
	if reconcile {
		r.reconcile(ctx)
	}
	if _, err := r.wtGit.Run(ctx, "add", "-A"); err != nil {
		r.j.Warn(runs.StepCommit, "%v", err)
		return false
	}
	if !r.wtGit.OK(ctx, "diff", "--cached", "--quiet") {
		msg := r.commitMessage(what, r.committed)
		args := append(r.wtGit.Identity(ctx), "commit", "-q", "-m", msg)
		if _, err := r.wtGit.Run(ctx, args...); err != nil {
			r.j.Warn(runs.StepCommit, "commit: %v", err)
			return false
		}
		files, _ := r.wtGit.Run(ctx, "show", "--name-only", "--format=", "HEAD")
		r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepCommit, Branch: r.branch, Message: msg},
			fmt.Sprintf("commit: %s (%d files)", msg, len(strings.Fields(files))))
		r.committed = r.statuses()
	}
	pushed := r.push(ctx)
	status, err := r.wtGit.Run(ctx, "status", "--porcelain")
	return pushed && err == nil && status == ""
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
// run). It reports whether the remote has the branch's head.
func (r *run) push(ctx context.Context) bool {
	if r.o.DryRun || !r.repo.HasRemote(ctx) {
		return true // nowhere to push to
	}
	if _, err := r.wtGit.Retry(ctx, "push", "-q", "-u", "origin", r.branch); err != nil {
		r.j.Warn(runs.StepCommit, "push %s: %v", r.branch, err)
		return false
	}
	return true
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
func (r *run) guardSaga(ctx context.Context) {
	out, err := r.wtGit.Raw(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".saga")
	if err != nil || out == "" {
		return
	}
	storyDir := path.Join(".saga", "stories", r.o.Story) + "/"
	var reverted []string
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
		switch {
		case rel == storyDir+"journal.md":
			continue
		case strings.HasPrefix(rel, storyDir) && code != "??" && code[1] != 'D' && path.Dir(rel)+"/" == storyDir:
			if r.keepFieldChanges(ctx, rel) {
				continue
			}
		}
		if err := r.revert(ctx, rel, code); err != nil {
			r.j.Warn(runs.StepCommit, "revert %s: %v", rel, err)
			continue
		}
		reverted = append(reverted, rel)
	}
	if len(reverted) == 0 {
		return
	}
	msg := fmt.Sprintf("reverted changes the agent made in .saga/ outside its journal and task statuses: %s", strings.Join(reverted, ", "))
	r.j.Warn(runs.StepCommit, "%s", msg)
	r.journalNote(msg)
}

// keepFieldChanges tells whether a story file differs from HEAD only in
// the members the worker and the hook write (a task's status; story.json's
// branch, worktree, pr and status). When it differs in more, the file is
// restored to HEAD with those members kept, and false is returned.
func (r *run) keepFieldChanges(ctx context.Context, rel string) bool {
	abs := filepath.Join(r.wt, filepath.FromSlash(rel))
	cur, err := os.ReadFile(abs)
	if err != nil {
		return false
	}
	head, err := r.wtGit.Raw(ctx, "show", "HEAD:"+rel)
	if err != nil {
		return false // new in the worktree: reverted (removed)
	}
	fields := []string{"status"}
	if path.Base(rel) == "story.json" {
		fields = []string{"branch", "worktree", "pr", "status"}
	}
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
	if err := store.WriteFileAtomic(abs, []byte(head), 0o644); err != nil {
		r.j.Warn(runs.StepCommit, "restore %s: %v", rel, err)
	}
	return false
}

// revert restores a path of the worktree to HEAD (a new file is removed).
func (r *run) revert(ctx context.Context, rel, code string) error {
	if code == "??" || code[0] == 'A' {
		if code[0] == 'A' {
			if _, err := r.wtGit.Run(ctx, "rm", "-q", "--cached", "--", rel); err != nil {
				return err
			}
		}
		err := os.Remove(filepath.Join(r.wt, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	_, err := r.wtGit.Run(ctx, "checkout", "HEAD", "--", rel)
	return err
}

// journalNote appends a worker entry to the story's journal.
func (r *run) journalNote(text string) {
	p := filepath.Join(r.storyDir(), "journal.md")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		r.j.Warn(runs.StepCommit, "journal: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "\n## %s worker note\n%s\n", r.o.Now().UTC().Format(time.RFC3339), text)
}
