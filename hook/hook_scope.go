package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store"
)

// StoryWorktree is a story's git worktree, as found from a directory in it.
type StoryWorktree struct {
	Story    string // canonical story name
	Worktree string // the worktree's root (absolute, clean)
	Repo     string // the checkout holding the worktrees folder (store.WorktreesRel)
	Legacy   bool   // found in the legacy <worktrees>/stories/<story>/
}

var worktreesMarker = string(filepath.Separator) + filepath.FromSlash(store.WorktreesRel)

// DetectStoryWorktree reports the story worktree containing dir: dir is
// inside <repo>/<worktrees>/<story>/ or the legacy
// <repo>/<worktrees>/stories/<story>/, or a dry run's
// <repo>/<worktrees>/<story>.dry/. The path decides, not git: a hook
// must answer without forking git. "stories" is read as the legacy folder
// unless <worktrees>/stories/ is itself a worktree (has .git).
// A folder name that is not a valid canonical name is no story context.
func DetectStoryWorktree(dir string) (StoryWorktree, bool) {
	if dir == "" {
		return StoryWorktree{}, false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return StoryWorktree{}, false
	}
	if wt, ok := detectLexical(abs); ok {
		return wt, true
	}
	// A symlinked spelling of a worktree path.
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return detectLexical(real)
	}
	return StoryWorktree{}, false
}

func detectLexical(abs string) (StoryWorktree, bool) {
	sep := string(filepath.Separator)
	p := filepath.Clean(abs) + sep
	// The innermost worktrees folder wins.
	i := strings.LastIndex(p, worktreesMarker+sep)
	if i < 0 {
		return StoryWorktree{}, false
	}
	repo := p[:i]
	if repo == "" {
		repo = sep
	}
	wts := p[:i+len(worktreesMarker)]
	rest := strings.Split(strings.Trim(p[i+len(worktreesMarker):], sep), sep)
	if len(rest) == 0 || rest[0] == "" {
		return StoryWorktree{}, false
	}
	// <story>.dry is the story's dry-run worktree (docs/worker.md#dry-runs).
	w := StoryWorktree{Story: strings.TrimSuffix(rest[0], store.DrySuffix), Worktree: filepath.Join(wts, rest[0]), Repo: repo}
	if rest[0] == "stories" && len(rest) >= 2 {
		if _, err := os.Lstat(filepath.Join(wts, "stories", ".git")); err != nil {
			w = StoryWorktree{Story: rest[1], Worktree: filepath.Join(wts, "stories", rest[1]), Repo: repo, Legacy: true}
		}
	}
	if !store.ValidCanonical(w.Story) {
		return StoryWorktree{}, false
	}
	return w, true
}

// pathKey is the tool_input key naming the path a write tool writes ("" for
// the tools PreToolUse does not check).
func pathKey(tool string) string {
	switch tool {
	case "Write", "Edit", "MultiEdit":
		return "file_path"
	case "NotebookEdit":
		return "notebook_path"
	}
	return ""
}

// Scope is what a story's agent may write (docs/hooks.md#pretooluse-write-scope): its worktree
// (less the files that set its own powers and its story's JSON), and the
// OS temp dir (less its repository and saga-lsp's own state).
type Scope struct {
	StoryWorktree
	TempDir   string   // the OS temp dir
	Protected []string // saga-lsp's own state: the session dir, lock dirs, task lists
}

// preToolUse denies writes outside the story's scope; everything else is
// allowed silently.
func (h *hookRun) preToolUse(p *HookPayload) {
	key := pathKey(p.ToolName)
	if key == "" {
		return
	}
	cwd := h.hookCwd(p)
	wt, ok := h.storyScope(cwd)
	if !ok {
		return
	}
	scope := Scope{StoryWorktree: wt, TempDir: os.TempDir(), Protected: h.protected()}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(p.ToolInput, &input); err != nil || input == nil {
		h.warnf("%s tool_input is not an object; not checked", p.ToolName)
		return
	}
	var path string
	if raw, ok := input[key]; !ok || json.Unmarshal(raw, &path) != nil || path == "" {
		h.warnf("%s tool_input has no %s; not checked", p.ToolName, key)
		return
	}
	if allowed, reason := CheckWriteScope(path, cwd, scope); !allowed {
		h.writeJSON(map[string]any{"hookSpecificOutput": denyOutput{
			HookEventName:            claudecode.EventPreToolUse,
			PermissionDecision:       "deny",
			PermissionDecisionReason: reason,
		}})
	}
}

// denyOutput keeps the field order of Claude Code's documented shape.
type denyOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// storyScope finds the story context of a tool call: runs.EnvStoryID from the
// environment (set by the worker, with runs.EnvProjectDir naming the
// worktree), or else cwd inside a story worktree.
func (h *hookRun) storyScope(cwd string) (StoryWorktree, bool) {
	detected, inWorktree := DetectStoryWorktree(cwd)
	story := h.getenv(runs.EnvStoryID)
	if story == "" {
		return detected, inWorktree
	}
	if !store.ValidCanonical(story) {
		h.warnf("%s %q is not a valid story name; ignored", runs.EnvStoryID, story)
		return detected, inWorktree
	}
	scope := StoryWorktree{Story: story}
	switch {
	case h.getenv(runs.EnvProjectDir) != "":
		scope.Worktree = absPathFrom(cwd, h.getenv(runs.EnvProjectDir))
	case inWorktree:
		scope.Worktree = detected.Worktree
	case h.getenv(claudecode.EnvProjectDir) != "":
		scope.Worktree = absPathFrom(cwd, h.getenv(claudecode.EnvProjectDir))
	default:
		if root, err := store.FindRoot(cwd); err == nil {
			scope.Worktree = root
		} else {
			scope.Worktree = absPathFrom("", cwd)
		}
	}
	if wt, ok := DetectStoryWorktree(scope.Worktree); ok {
		scope.Repo = wt.Repo
	}
	return scope, true
}

// absPathFrom makes p absolute against base (or the process's directory) and
// cleans it.
func absPathFrom(base, p string) string {
	if !filepath.IsAbs(p) {
		if base == "" || !filepath.IsAbs(base) {
			if wd, err := os.Getwd(); err == nil {
				base = filepath.Join(wd, base)
			}
		}
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// protected is saga-lsp's own state a hook's agent must never write, even
// where it lies in the temp dir: the session dir (output and events files
// that status and the editor trust), the lock dirs of repositories outside
// git, the build caches (its own are for its Bash; other stories' and the
// checks' are not its to write), and Claude Code's task lists (written
// only through the Task tools, so that the hooks see every change).
func (h *hookRun) protected() []string {
	dir := runs.SessionDir(h.env)
	out := []string{dir, filesafe.TempLockRoot()}
	if legacy := runs.LegacySessionDir(dir); legacy != "" {
		out = append(out, legacy) // still read while runs of earlier releases are there
	}
	// In a worker's run XDG_CACHE_HOME points into the story's own caches:
	// the root is found from them (<root>/<repo>/agent/<story>).
	if c := h.getenv(runs.EnvCacheDir); c != "" {
		out = append(out, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Clean(c)))))
	} else if c, err := buildcache.CacheRoot(h.env); err == nil {
		out = append(out, c)
	}
	if cfg, err := claudecode.ConfigDir(h.env); err == nil {
		out = append(out, filepath.Join(cfg, "tasks"))
	}
	return out
}

// CheckWriteScope decides whether a story's agent may write path (relative
// paths are taken against cwd). Allowed: inside the worktree, except
//   - the files that would change the agent's own powers or escape git's
//     hands: .claude/, .mcp.json, .git (file or folder, at any depth),
//     .gitmodules and hook folders (.githooks, .husky);
//   - inside the worktree's .saga/ anything but the story's journal.md (its
//     task and story JSON are written by the hook and the worker);
//
// and the temp dir, except for the repository the worktree belongs to and
// saga-lsp's own state (scope.Protected). The path is cleaned and every
// symlink on it resolved (dangling ones too, since a write through a link
// creates its target), so neither ".." nor links escape. reason names the
// path and the allowed scope.
func CheckWriteScope(path, cwd string, scope Scope) (allowed bool, reason string) {
	abs := absPathFrom(cwd, path)
	real, err := resolveAllLinks(abs)
	if err != nil {
		return false, fmt.Sprintf("SAGA scope: cannot check %s (%v), so writing it is not allowed; story %q may write only inside its worktree %s", path, err, scope.Story, scope.Worktree)
	}
	shown := path
	if real != path {
		shown = fmt.Sprintf("%s (resolved: %s)", path, real)
	}
	for _, p := range scope.Protected {
		if p == "" {
			continue
		}
		if _, ok := pathWithin(real, resolvedPath(p)); ok {
			return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: it is saga-lsp's own state (%s), which status, the editor and the worker trust", shown, p)
		}
	}
	wt := resolvedPath(scope.Worktree)
	// The .saga/ folder as the filesystem sees it; the story folder must be
	// a plain folder in it (a linked story folder could lead anywhere).
	sagaDir := resolvedPath(filepath.Join(scope.Worktree, ".saga"))
	storyDir := filepath.Join(sagaDir, "stories", scope.Story)
	_, inSaga := pathWithin(real, sagaDir)
	if !inSaga {
		_, inSaga = pathWithin(real, filepath.Join(wt, ".saga"))
	}
	if inSaga {
		if r, ok := pathWithin(real, storyDir); ok && r == "journal.md" {
			return true, ""
		}
		if r, ok := pathWithin(real, storyDir); ok && r != "." {
			return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: in its story folder story %q may write only journal.md; task statuses are recorded by the hook when you use TaskUpdate, and the task and story files are not yours to edit",
				shown, scope.Story)
		}
		return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: inside .saga/ story %q may only write its journal %s%cjournal.md (epics, other stories and worktrees are off limits)",
			shown, scope.Story, storyDir, filepath.Separator)
	}
	if rel, ok := pathWithin(real, wt); ok {
		if what := ownPowers(rel); what != "" {
			return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: it is %s, which story %q may not change", shown, what, scope.Story)
		}
		return true, ""
	}
	repo := ""
	if scope.Repo != "" {
		repo = resolvedPath(scope.Repo)
	}
	note := ""
	if scope.TempDir != "" {
		if _, ok := pathWithin(real, resolvedPath(scope.TempDir)); ok {
			_, inRepo := pathWithin(real, repo)
			if repo == "" || !inRepo {
				return true, ""
			}
			note = fmt.Sprintf("; the temp dir exception does not cover the story's repository %s", repo)
		}
	}
	return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: it is outside the story worktree. Story %q may write only inside %s (in its .saga/ only its journal) and in the temp dir %s%s",
		shown, scope.Story, wt, resolvedPath(scope.TempDir), note)
}

// ownPowers names what a worktree-relative path would change beyond the
// story's work: Claude Code's project configuration (hooks, permissions,
// MCP servers) or git's own files and hooks. "" for an ordinary path.
func ownPowers(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if rel == ".mcp.json" {
		return "Claude Code's MCP configuration"
	}
	for _, p := range parts {
		switch p {
		case ".claude":
			return "Claude Code's project configuration (.claude/)"
		case ".git":
			return "git's own data (.git)"
		case ".githooks", ".husky":
			return "a git hooks folder (" + p + ")"
		}
	}
	if parts[len(parts)-1] == ".gitmodules" {
		return "git's submodule configuration (.gitmodules)"
	}
	return ""
}

// pathWithin reports whether p is dir or below it, with p relative to dir.
func pathWithin(p, dir string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if rest, ok := strings.CutPrefix(p, prefix); ok {
		return rest, true
	}
	if caseInsensitiveFS() && len(p) > len(prefix) && strings.EqualFold(p[:len(prefix)], prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

func caseInsensitiveFS() bool { return runtime.GOOS == "darwin" || runtime.GOOS == "windows" }

func resolvedPath(p string) string {
	if r, err := resolveAllLinks(absPathFrom("", p)); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// maxScopeLinks bounds symlink resolution (Linux's own limit is 40).
const maxScopeLinks = 40

// resolveAllLinks resolves every symlink on the absolute, clean path p, like
// the kernel does on open: components that exist are followed, including a
// dangling link (its target is what a write would create); components that
// do not exist are taken literally.
func resolveAllLinks(p string) (string, error) {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(p)
	todo := strings.Split(strings.TrimPrefix(p[len(vol):], sep), sep)
	resolved := vol + sep
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Below a missing component nothing exists (and so no link
			// either), but ".." from a link target may climb back out of
			// it, so later components are still looked at.
			if errors.Is(err, fs.ErrNotExist) || filesafe.IsNotDir(err) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxScopeLinks {
			return "", fmt.Errorf("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved = v + sep
			target = target[len(v):]
		}
		todo = append(strings.Split(target, sep), todo...)
	}
	return filepath.Clean(resolved), nil
}
