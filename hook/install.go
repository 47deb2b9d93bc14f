package hook

// `saga-lsp install`: register saga-lsp's Claude Code hooks in a
// settings.json by byte-minimal edits — every other key, hook and the
// file's formatting stay as they were — and print editor setup.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Settings scopes of Install.
const (
	ScopeProject = "project" // <root>/.claude/settings.json
	ScopeUser    = "user"    // settings.json in claudecode.ConfigDir
)

// InstallOptions configure Install.
type InstallOptions struct {
	Root   string // the project (ScopeProject)
	Scope  string // ScopeProject (default) or ScopeUser
	DryRun bool   // compute the result, write nothing
	Self   string // the saga-lsp binary; default runs.SelfPath(Env)
	Env    func(string) string
}

// Installed reports what Install did (or, dry, would do).
type Installed struct {
	Path    string // the settings file
	Command string // the hook command registered
	Content []byte // the resulting settings
	Created bool   // the file did not exist
	Changed bool   // the content differs from the file's (always true when Created)
	Written bool   // the file was written (not a dry run, and Changed)
	Note    string // a caveat for the user ("" when none)
}

// SettingsError refuses a settings file Install cannot safely edit; the file
// is left untouched.
type SettingsError struct {
	Path   string
	Reason string
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("%s: %s; it was left untouched: fix it (or move it away) and run `saga-lsp install` again", e.Path, e.Reason)
}

// SettingsPath is the settings.json of a scope.
func SettingsPath(scope, root string, env func(string) string) (string, error) {
	switch scope {
	case "", ScopeProject:
		return filepath.Join(root, ".claude", "settings.json"), nil
	case ScopeUser:
		if d := runs.Getenv(env, claudecode.EnvConfigDir); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		home := runs.Getenv(env, "HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find the home folder (%v): set HOME", err)
			}
			home = h
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("invalid --claude-settings %q: use project or user", scope)
}

// Install merges saga-lsp's hooks into the scope's settings.json and writes
// it atomically (unless DryRun). A file that is not a JSON object, or whose
// "hooks" have an unexpected shape, is refused with a *SettingsError.
func Install(o InstallOptions) (*Installed, error) {
	path, err := SettingsPath(o.Scope, o.Root, o.Env)
	if err != nil {
		return nil, err
	}
	if o.Self == "" {
		if o.Self, err = runs.SelfPath(o.Env); err != nil {
			return nil, err
		}
	}
	// Write through a symlink (dotfile managers link settings.json) rather
	// than replacing it.
	real := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return nil, &SettingsError{Path: path, Reason: fmt.Sprintf("a symbolic link that cannot be followed (%v)", err)}
		}
	}
	res := &Installed{Path: path}
	res.Command, res.Note = hookCommandFor(o.Scope, o.Self)
	old, err := readSettings(path, real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return nil, err
	}
	src := old
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	out, err := MergeHooks(src, res.Command)
	if err != nil {
		var se *SettingsError
		if errors.As(err, &se) {
			se.Path = path
		}
		return nil, err
	}
	res.Content = out
	res.Changed = res.Created || !bytes.Equal(out, old)
	if o.DryRun || !res.Changed {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(real), err)
	}
	if err := filesafe.WriteFileAtomic(real, out, 0o644); err != nil {
		return nil, err
	}
	res.Written = true
	return res, nil
}

// maxSettingsSize bounds what install reads of a settings file: Claude
// Code's settings are a few kilobytes.
const maxSettingsSize = 4 << 20

// readSettings reads the settings file (real: path with its link
// resolved). A FIFO, a device or a folder is refused without blocking or
// reading it, a file over maxSettingsSize too; a missing file is
// fs.ErrNotExist.
func readSettings(path, real string) ([]byte, error) {
	src, err := filesafe.ReadRegularFile(real, maxSettingsSize)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return src, err
	case errors.Is(err, filesafe.ErrNotRegular):
		var pe *fs.PathError
		errors.As(err, &pe)
		return nil, &SettingsError{Path: path, Reason: fmt.Sprintf("%v, not a settings file: install reads and replaces regular files only", pe.Err)}
	case errors.Is(err, filesafe.ErrTooLarge):
		return nil, &SettingsError{Path: path, Reason: fmt.Sprintf("over %d MB, too large for a settings file", maxSettingsSize>>20)}
	}
	return nil, fmt.Errorf("read %s: %w", path, err)
}

// hookCommandFor is the hook command a scope's settings should name.
// Project settings are shared through git, so they name `saga-lsp hook`
// as found on PATH, never one machine's absolute path; only user
// settings, or a saga-lsp that is not on PATH, get the absolute path (and
// then a note saying so).
// Either names saga-lsp-hook instead when it is saga-lsp's own, beside it
// (runs.HookProgram).
func hookCommandFor(scope, self string) (command, note string) {
	if scope == ScopeUser {
		return runs.HookCommand(runs.HookProgram(self)), ""
	}
	if onPath, err := exec.LookPath("saga-lsp"); err == nil {
		if prog := runs.HookProgram(onPath); prog != onPath {
			if found, err := exec.LookPath(runs.HookBinary); err == nil && filepath.Clean(found) == filepath.Clean(prog) {
				return runs.HookCommand(runs.HookBinary), ""
			}
		}
		return runs.HookCommand("saga-lsp"), ""
	}
	return runs.HookCommand(runs.HookProgram(self)), fmt.Sprintf("saga-lsp is not on PATH, so the project settings name %s; teammates need the same path — put saga-lsp on PATH (make install) and run install again to register `saga-lsp hook`", self)
}

// MergeHooks returns settings src with saga-lsp's hooks (command) merged in.
// Our entries are recognised by their command (a saga-lsp binary run with
// "hook") and updated in place; duplicates of ours are removed; everything
// else is kept byte for byte. Merging its own output changes nothing.
func MergeHooks(src []byte, command string) ([]byte, error) {
	if err := validSettings(src); err != nil {
		return nil, err
	}
	for range 200 {
		next, changed, err := mergeStep(src, command)
		if err != nil {
			return nil, err
		}
		if !changed {
			if !json.Valid(src) {
				return nil, errors.New("internal error: the merged settings are not valid JSON")
			}
			return src, nil
		}
		src = next
	}
	return nil, errors.New("internal error: merging the hooks did not settle")
}

// validSettings accepts a JSON object, with "hooks" an object of arrays.
func validSettings(src []byte) error {
	doc := jsonc.Parse(src)
	if len(doc.Errors) > 0 {
		e := doc.Errors[0]
		pos := doc.Lines().Position(e.Start)
		return &SettingsError{Reason: fmt.Sprintf("not valid JSON: %s at line %d, column %d", e.Message, pos.Line+1, pos.Character+1)}
	}
	if !json.Valid(src) {
		return &SettingsError{Reason: "not valid JSON"}
	}
	if doc.Root == nil || doc.Root.Kind != jsonc.Object {
		return &SettingsError{Reason: fmt.Sprintf("the top-level value is %s, not an object", article(doc.Root))}
	}
	hooks := doc.Root.Get("hooks")
	if hooks == nil {
		return nil
	}
	if hooks.Kind != jsonc.Object {
		return &SettingsError{Reason: fmt.Sprintf(`"hooks" is %s, not an object`, article(hooks))}
	}
	for _, h := range claudecode.Hooks {
		if v := hooks.Get(h.Event); v != nil && v.Kind != jsonc.Array {
			return &SettingsError{Reason: fmt.Sprintf(`"hooks"."%s" is %s, not an array`, h.Event, article(v))}
		}
	}
	return nil
}

func article(n *jsonc.Node) string {
	if n == nil {
		return "missing"
	}
	switch n.Kind {
	case jsonc.Array, jsonc.Object:
		return "an " + n.Kind.String()
	case jsonc.Null:
		return "null"
	}
	return "a " + n.Kind.String()
}

// allHooks marshals to the "hooks" object registering every hook, failing
// open: a project's settings reach every collaborator's sessions, with or
// without saga-lsp (docs/hooks.md#failing-closed).
type allHooks string

func (a allHooks) MarshalJSON() ([]byte, error) {
	return claudecode.HooksJSON(string(a), 0, false), nil
}

// mergeStep makes the first edit still needed; changed is false when none is.
func mergeStep(src []byte, command string) (out []byte, changed bool, err error) {
	doc := jsonc.Parse(src)
	root := doc.Root
	if len(doc.Errors) > 0 || root == nil || root.Kind != jsonc.Object {
		return nil, false, errors.New("internal error: an edit broke the settings")
	}
	lay := jsonc.LayoutOf(src, root)
	val := func(v any) func(bool) string { return func(pretty bool) string { return lay.Marshal(v, pretty) } }
	edit := func(edits ...jsonc.Edit) ([]byte, bool, error) { return jsonc.Apply(src, edits...), true, nil }
	hm := root.Member("hooks")
	if hm == nil || hm.Value == nil {
		return edit(lay.InsertMember(src, root, "hooks", val(allHooks(command))))
	}
	hooks := hm.Value
	for _, spec := range claudecode.Hooks {
		m := hooks.Member(spec.Event)
		if m == nil || m.Value == nil {
			return edit(lay.InsertMember(src, hooks, spec.Event, val([]claudecode.HookGroup{spec.Group(command)})))
		}
		arr := m.Value
		type loc struct{ g, h int }
		var ours []loc
		for gi, g := range arr.Elems() {
			hs := g.Get("hooks")
			if g.Kind != jsonc.Object || hs == nil || hs.Kind != jsonc.Array {
				continue
			}
			for hi, h := range hs.Elems() {
				if isOurHook(h) {
					ours = append(ours, loc{gi, hi})
				}
			}
		}
		if len(ours) == 0 {
			return edit(lay.AppendElement(src, arr, val(spec.Group(command))))
		}
		if len(ours) > 1 { // a duplicate of ours: drop the last one
			l := ours[len(ours)-1]
			if hs := arr.Elems()[l.g].Get("hooks"); len(hs.Elems()) > 1 {
				return edit(jsonc.RemoveElement(src, hs, l.h)...)
			}
			return edit(jsonc.RemoveElement(src, arr, l.g)...)
		}
		g := arr.Elems()[ours[0].g]
		hs := g.Get("hooks")
		h := hs.Elems()[ours[0].h]
		if !matcherOK(g, spec.Matcher) {
			if len(hs.Elems()) > 1 {
				// It shares a group with other hooks: leave theirs be and
				// move ours to a group of its own.
				return edit(jsonc.RemoveElement(src, hs, ours[0].h)...)
			}
			if spec.Matcher == "" {
				return edit(jsonc.RemoveMember(src, g, "matcher")...)
			}
			return edit(lay.SetMember(src, g, "matcher", val(spec.Matcher)))
		}
		if h.Kind != jsonc.Object {
			continue
		}
		if t := h.Get("type"); t == nil || t.Kind != jsonc.String || t.Str() != "command" {
			return edit(lay.SetMember(src, h, "type", val("command")))
		}
		if c := h.Get("command"); c == nil || c.Kind != jsonc.String || c.Str() != command {
			return edit(lay.SetMember(src, h, "command", val(command)))
		}
		if t := h.Get("timeout"); t == nil || t.Kind != jsonc.Number || t.Raw() != fmt.Sprint(spec.Timeout()) {
			return edit(lay.SetMember(src, h, "timeout", val(spec.Timeout())))
		}
	}
	return src, false, nil
}

// matcherOK: the group's matcher is want ("" accepts none, "" and "*").
func matcherOK(g *jsonc.Node, want string) bool {
	m := g.Get("matcher")
	if want == "" {
		return m == nil || (m.Kind == jsonc.String && (m.Str() == "" || m.Str() == "*"))
	}
	return m != nil && m.Kind == jsonc.String && m.Str() == want
}

// isOurHook recognises a command hook running saga-lsp or saga-lsp-hook
// with the argument "hook" (any path, quoted or not).
func isOurHook(h *jsonc.Node) bool {
	c := h.Get("command")
	return h.Kind == jsonc.Object && c != nil && c.Kind == jsonc.String && IsSagaHookCommand(c.Str())
}

// IsSagaHookCommand reports whether a hook command line runs saga-lsp's hook.
func IsSagaHookCommand(cmd string) bool {
	words, ok := shellWords(cmd)
	if !ok || len(words) < 2 || words[len(words)-1] != "hook" {
		return false
	}
	prog := words[len(words)-2]
	base := strings.TrimSuffix(prog[strings.LastIndexByte(prog, '/')+1:], ".exe")
	return base == "saga-lsp" || base == runs.HookBinary
}

// shellWords splits a command line as a POSIX shell would (quotes and
// backslashes; no expansion). ok is false for an unterminated quote.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// ---------------------------------------------------------------------------
// byte-minimal edits laid out like their surroundings

// ---------------------------------------------------------------------------
// editor setup

// EditorCommand is how editors should start saga-lsp: "saga-lsp" when that
// name on PATH is self, else self's absolute path.
func EditorCommand(self string) string {
	if p, err := exec.LookPath("saga-lsp"); err == nil {
		a, errA := filepath.EvalSymlinks(p)
		b, errB := filepath.EvalSymlinks(self)
		if errA == nil && errB == nil && a == b {
			return "saga-lsp"
		}
	}
	return self
}
