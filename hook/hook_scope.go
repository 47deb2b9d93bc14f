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
	"syscall"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
	"github.com/saga-ai/saga-lsp/store/runs"
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
// <repo>/<worktrees>/stories/<story>/. The path decides, not git: a hook
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
	w := StoryWorktree{Story: rest[0], Worktree: filepath.Join(wts, rest[0]), Repo: repo}
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

// writeTools are the tools PreToolUse checks, with the input key naming
// the path they write.
var writeTools = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// scopeTempDirs lists the temp dirs writes are allowed in (a variable so
// tests can use one that does not contain their worktrees).
var scopeTempDirs = func() []string { return []string{os.TempDir(), "/tmp"} }

// preToolUse denies writes outside the story's scope; everything else is
// allowed silently.
func (h *hookRun) preToolUse(p *HookPayload) {
	key, ok := writeTools[p.ToolName]
	if !ok {
		return
	}
	cwd := h.hookCwd(p)
	scope, ok := h.storyScope(cwd)
	if !ok {
		return
	}
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
			HookEventName:            claudetasks.EventPreToolUse,
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
	case h.getenv(claudetasks.EnvProjectDir) != "":
		scope.Worktree = absPathFrom(cwd, h.getenv(claudetasks.EnvProjectDir))
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

// CheckWriteScope decides whether a story's agent may write path (relative
// paths are taken against cwd). Allowed: inside the worktree, except that
// inside the worktree's .saga/ only .saga/stories/<story>/ is; and the temp
// dirs, except for the repository the worktree belongs to. The path is
// cleaned and every symlink on it resolved (dangling ones too, since a write
// through a link creates its target), so neither ".." nor links escape.
// reason names the path and the allowed scope.
func CheckWriteScope(path, cwd string, scope StoryWorktree) (allowed bool, reason string) {
	abs := absPathFrom(cwd, path)
	real, err := resolveAllLinks(abs)
	if err != nil {
		return false, fmt.Sprintf("SAGA scope: cannot check %s (%v), so writing it is not allowed; story %q may write only inside its worktree %s", path, err, scope.Story, scope.Worktree)
	}
	shown := path
	if real != path {
		shown = fmt.Sprintf("%s (resolved: %s)", path, real)
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
		if r, ok := pathWithin(real, storyDir); ok && r != "." {
			return true, ""
		}
		return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: inside .saga/ story %q may only write its own folder %s%c (epics, other stories and worktrees are off limits)",
			shown, scope.Story, storyDir, filepath.Separator)
	}
	if _, ok := pathWithin(real, wt); ok {
		return true, ""
	}
	repo := ""
	if scope.Repo != "" {
		repo = resolvedPath(scope.Repo)
	}
	temps := scopeTempDirs()
	note := ""
	for _, t := range temps {
		if t == "" {
			continue
		}
		if _, ok := pathWithin(real, resolvedPath(t)); !ok {
			continue
		}
		if repo != "" {
			if _, inRepo := pathWithin(real, repo); inRepo {
				note = fmt.Sprintf("; the temp dir exception does not cover the story's repository %s", repo)
				break
			}
		}
		return true, ""
	}
	tempDir := ""
	if len(temps) > 0 {
		tempDir = resolvedPath(temps[0])
	}
	return false, fmt.Sprintf("SAGA scope: writing %s is not allowed: it is outside the story worktree. Story %q may write only inside %s (in its .saga/ only under .saga/stories/%s/) and in the temp dir %s%s",
		shown, scope.Story, wt, scope.Story, tempDir, note)
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
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
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
