//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// leftBehind lists what a refused run must not leave: worktrees, story
// branches, tmux sessions, commits, changed files.
func leftBehind(t *testing.T, h *tmuxEnv, head string) []string {
	t.Helper()
	var out []string
	if des, _ := os.ReadDir(filepath.Join(h.root, ".saga", "worktrees")); len(des) > 0 {
		out = append(out, "a worktree")
	}
	if b := testkit.Git(t, h.root, "branch", "--list", "story/*"); b != "" {
		out = append(out, "branch "+b)
	}
	if s, err := h.tmux("list-sessions", "-F", "#{session_name}"); err == nil && strings.Contains(s, "saga-") {
		out = append(out, "session "+s)
	}
	if now := testkit.Git(t, h.root, "rev-parse", "HEAD"); now != head {
		out = append(out, "a commit")
	}
	if st := testkit.Git(t, h.root, "status", "--porcelain"); st != "" {
		out = append(out, "changes "+st)
	}
	return out
}

// A run that cannot work never starts: exit 1 with the reason, and nothing
// is left behind — on every call.
func TestRunRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, h *tmuxEnv) []string // extra env
		args  []string
		want  string
	}{
		{"no claude", func(t *testing.T, h *tmuxEnv) []string {
			return []string{"SAGA_CLAUDE=" + filepath.Join(t.TempDir(), "no-claude")}
		}, []string{story}, "no-claude is not installed"},
		// Hooks fail closed from 2.1.295 on (runs/doctor's check, as
		// `saga-lsp doctor` says it).
		{"claude too old", func(t *testing.T, h *tmuxEnv) []string {
			old := filepath.Join(t.TempDir(), "claude")
			os.WriteFile(old, []byte("#!/bin/sh\necho '2.1.200 (Claude Code)'\n"), 0o755)
			return []string{"SAGA_CLAUDE=" + old}
		}, []string{story}, "is too old: 2.1.295 or later makes a failing hook refuse, not let the work through: update it"},
		{"task cycle", func(t *testing.T, h *tmuxEnv) []string {
			p := filepath.Join(h.root, ".saga/stories", story, "write-tests.json")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"blockedBy": []`, `"blockedBy": ["implement-button"]`, 1)), 0o644)
			testkit.Git(t, h.root, "commit", "-qam", "cycle")
			return nil
		}, []string{story}, "dependency-cycle"},
		{"unfinished epic blocker", nil, []string{"user-auth--login-page"}, "its epic blockers are not completed: user-auth--api"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTmuxEnv(t)
			var extra []string
			if tc.setup != nil {
				extra = tc.setup(t, h)
			}
			head := testkit.Git(t, h.root, "rev-parse", "HEAD")
			for i := range 3 {
				r := h.saga(t, extra, append([]string{"run"}, tc.args...)...)
				if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) || !strings.Contains(r.Stderr, "not starting story") {
					t.Fatalf("call %d: exit %d, want 1 and %q\n%s%s", i+1, r.Code, tc.want, r.Stdout, r.Stderr)
				}
				if left := leftBehind(t, h, head); len(left) > 0 {
					t.Fatalf("call %d left %v behind", i+1, left)
				}
			}
		})
	}
}

// --force starts a story whose epic blockers are unfinished; once the
// blocker is completed (here: on the base) no force is needed.
func TestRunForceAndCompletedBlockers(t *testing.T) {
	h := newTmuxEnv(t)
	if r := h.saga(t, nil, "run", "user-auth--login-page", "--force", "--dry-run"); r.Code != 0 {
		t.Fatalf("run --force: exit %d\n%s", r.Code, r.Stderr)
	}
	h2 := newTmuxEnv(t)
	dir := filepath.Join(h2.root, ".saga/stories/user-auth--api")
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".json") && de.Name() != "story.json" {
			p := filepath.Join(dir, de.Name())
			data, _ := os.ReadFile(p)
			for _, st := range []string{`"pending"`, `"in_progress"`} {
				data = []byte(strings.ReplaceAll(string(data), `"status": `+st, `"status": "completed"`))
			}
			os.WriteFile(p, data, 0o644)
		}
	}
	testkit.Git(t, h2.root, "commit", "-qam", "api done")
	if r := h2.saga(t, nil, "run", "user-auth--login-page", "--dry-run"); r.Code != 0 {
		t.Fatalf("run after the blocker completed: exit %d\n%s", r.Code, r.Stderr)
	}
}

// Outside a git repository nothing starts.
func TestRunOutsideGit(t *testing.T) {
	h := newTmuxEnv(t)
	plain := testkit.CopyTree(t, "../../examples/workspace")
	r := sagaLSP(t, plain, h.env, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "is not inside a git repository") {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(plain, ".saga", "worktrees")); !os.IsNotExist(err) {
		t.Errorf("a worktrees folder was made: %v", err)
	}
}
