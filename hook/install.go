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

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/runs"
)

// Settings scopes of Install.
const (
	ScopeProject = "project" // <root>/.claude/settings.json
	ScopeUser    = "user"    // settings.json in claudetasks.ConfigDir
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
		if d := runs.Getenv(env, claudetasks.EnvConfigDir); d != "" {
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
	res := &Installed{Path: path, Command: runs.HookCommand(o.Self)}
	old, err := os.ReadFile(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
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
	if err := store.WriteFileAtomic(real, out, 0o644); err != nil {
		return nil, err
	}
	res.Written = true
	return res, nil
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
		pos := doc.Lines.Position(e.Start)
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
	for _, h := range claudetasks.Hooks {
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

// allHooks marshals to the "hooks" object registering every hook.
type allHooks string

func (a allHooks) MarshalJSON() ([]byte, error) { return claudetasks.HooksJSON(string(a)), nil }

// mergeStep makes the first edit still needed; changed is false when none is.
func mergeStep(src []byte, command string) (out []byte, changed bool, err error) {
	doc := jsonc.Parse(src)
	root := doc.Root
	if len(doc.Errors) > 0 || root == nil || root.Kind != jsonc.Object {
		return nil, false, errors.New("internal error: an edit broke the settings")
	}
	st := styleOf(src, root)
	hm := root.Member("hooks")
	if hm == nil || hm.Value == nil {
		return st.insertMember(src, root, "hooks", allHooks(command)), true, nil
	}
	hooks := hm.Value
	for _, spec := range claudetasks.Hooks {
		m := hooks.Member(spec.Event)
		if m == nil || m.Value == nil {
			return st.insertMember(src, hooks, spec.Event, []claudetasks.HookGroup{spec.Group(command)}), true, nil
		}
		arr := m.Value
		type loc struct{ g, h int }
		var ours []loc
		for gi, g := range arr.Elems {
			hs := g.Get("hooks")
			if g.Kind != jsonc.Object || hs == nil || hs.Kind != jsonc.Array {
				continue
			}
			for hi, h := range hs.Elems {
				if isOurHook(h) {
					ours = append(ours, loc{gi, hi})
				}
			}
		}
		if len(ours) == 0 {
			return st.appendElement(src, arr, spec.Group(command)), true, nil
		}
		if len(ours) > 1 { // a duplicate of ours: drop the last one
			l := ours[len(ours)-1]
			if hs := arr.Elems[l.g].Get("hooks"); len(hs.Elems) > 1 {
				return removeElement(src, hs, l.h), true, nil
			}
			return removeElement(src, arr, l.g), true, nil
		}
		g := arr.Elems[ours[0].g]
		hs := g.Get("hooks")
		h := hs.Elems[ours[0].h]
		if !matcherOK(g, spec.Matcher) {
			if len(hs.Elems) > 1 {
				// It shares a group with other hooks: leave theirs be and
				// move ours to a group of its own.
				return removeElement(src, hs, ours[0].h), true, nil
			}
			if spec.Matcher == "" {
				return removeMember(src, g, "matcher"), true, nil
			}
			return st.setMember(src, g, "matcher", spec.Matcher), true, nil
		}
		if h.Kind != jsonc.Object {
			continue
		}
		if t := h.Get("type"); t == nil || t.Kind != jsonc.String || t.Str != "command" {
			return st.setMember(src, h, "type", "command"), true, nil
		}
		if c := h.Get("command"); c == nil || c.Kind != jsonc.String || c.Str != command {
			return st.setMember(src, h, "command", command), true, nil
		}
		if t := h.Get("timeout"); t == nil || t.Kind != jsonc.Number || t.Raw != fmt.Sprint(claudetasks.HookTimeout) {
			return st.setMember(src, h, "timeout", claudetasks.HookTimeout), true, nil
		}
	}
	return src, false, nil
}

// matcherOK: the group's matcher is want ("" accepts none, "" and "*").
func matcherOK(g *jsonc.Node, want string) bool {
	m := g.Get("matcher")
	if want == "" {
		return m == nil || (m.Kind == jsonc.String && (m.Str == "" || m.Str == "*"))
	}
	return m != nil && m.Kind == jsonc.String && m.Str == want
}

// isOurHook recognises a command hook running a saga-lsp binary with the
// argument "hook" (any path, quoted or not).
func isOurHook(h *jsonc.Node) bool {
	c := h.Get("command")
	return h.Kind == jsonc.Object && c != nil && c.Kind == jsonc.String && IsSagaHookCommand(c.Str)
}

// IsSagaHookCommand reports whether a hook command line runs saga-lsp's hook.
func IsSagaHookCommand(cmd string) bool {
	words, ok := shellWords(cmd)
	if !ok || len(words) < 2 || words[len(words)-1] != "hook" {
		return false
	}
	prog := words[len(words)-2]
	base := prog[strings.LastIndexByte(prog, '/')+1:]
	return base == "saga-lsp" || base == "saga-lsp.exe"
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

// style is how the file lays JSON out, so inserted text looks like the rest.
type style struct {
	unit  string // one indentation step of multi-line containers
	colon string // between key and value: ": " or ":"
	comma string // between the children of a one-line container: ", " or ","
}

// styleOf reads the layout off the top-level object (2 spaces, ": " and
// ", " when it cannot tell).
func styleOf(src []byte, root *jsonc.Node) style {
	st := style{unit: "  ", colon: ": ", comma: ", "}
	if len(root.Members) == 0 {
		return st
	}
	first := root.Members[0]
	if multiLine(src, root) {
		if u, ok := strings.CutPrefix(lineIndent(src, first.Key.Start), lineIndent(src, root.Start)); ok && u != "" {
			st.unit = u
		}
	}
	if first.Colon >= 0 && first.Colon+1 < len(src) && src[first.Colon+1] != ' ' {
		st.colon, st.comma = ":", ","
	}
	return st
}

// text encodes v without HTML escaping and without a final newline:
// indented by the file's step (pretty), or on one line with its spacing.
func (st style) text(v any, pretty bool) string {
	if !pretty {
		return st.oneLine(jsonText(v))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", st.unit)
	_ = enc.Encode(v) // our values always encode
	out := strings.TrimSuffix(b.String(), "\n")
	if st.colon == ":" {
		return st.oneLineColons(out)
	}
	return out
}

// oneLine respaces compact JSON with the file's colon and comma.
func (st style) oneLine(compact string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		b.WriteByte(c)
		switch {
		case inStr && c == '\\':
			i++
			b.WriteByte(compact[i])
		case c == '"':
			inStr = !inStr
		case !inStr && c == ':':
			b.WriteString(st.colon[1:])
		case !inStr && c == ',':
			b.WriteString(st.comma[1:])
		}
	}
	return b.String()
}

// oneLineColons turns the encoder's ": " into ":" outside strings.
func (st style) oneLineColons(pretty string) string {
	var b strings.Builder
	inStr := false
	for i := 0; i < len(pretty); i++ {
		c := pretty[i]
		b.WriteByte(c)
		switch {
		case inStr && c == '\\':
			i++
			b.WriteByte(pretty[i])
		case c == '"':
			inStr = !inStr
		case !inStr && c == ':' && i+1 < len(pretty) && pretty[i+1] == ' ':
			i++
		}
	}
	return b.String()
}

// jsonText encodes v on one line without HTML escaping.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // our values always encode
	return strings.TrimSuffix(b.String(), "\n")
}

// multiLine reports whether a container lays its children out on lines of
// their own; an empty container gets the multi-line layout.
func multiLine(src []byte, n *jsonc.Node) bool {
	firstStart := -1
	switch {
	case n.Kind == jsonc.Object && len(n.Members) > 0:
		firstStart = n.Members[0].Key.Start
	case n.Kind == jsonc.Array && len(n.Elems) > 0:
		firstStart = n.Elems[0].Start
	default:
		return true
	}
	return bytes.IndexByte(src[n.Start:firstStart], '\n') >= 0
}

// lineIndent returns the leading white space of the line holding offset.
func lineIndent(src []byte, offset int) string {
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

func reindent(text, indent string) string { return strings.ReplaceAll(text, "\n", "\n"+indent) }

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// insertMember adds "key": v after the object's last member.
func (st style) insertMember(src []byte, obj *jsonc.Node, key string, v any) []byte {
	k := store.MarshalString(key) + st.colon
	if len(obj.Members) == 0 {
		indent := lineIndent(src, obj.Start)
		inner := indent + st.unit
		return splice(src, obj.Start+1, obj.End-1, "\n"+inner+k+reindent(st.text(v, true), inner)+"\n"+indent)
	}
	last := obj.Members[len(obj.Members)-1]
	end := last.Key.End
	if last.Value != nil {
		end = last.Value.End
	}
	if !multiLine(src, obj) {
		return splice(src, end, end, st.comma+k+st.text(v, false))
	}
	indent := lineIndent(src, last.Key.Start)
	return splice(src, end, end, ",\n"+indent+k+reindent(st.text(v, true), indent))
}

// setMember sets key to v: the value's bytes are replaced when the member
// exists, else the member is added.
func (st style) setMember(src []byte, obj *jsonc.Node, key string, v any) []byte {
	if m := obj.Member(key); m != nil && m.Value != nil {
		return splice(src, m.Value.Start, m.Value.End, st.text(v, false))
	}
	return st.insertMember(src, obj, key, v)
}

// appendElement adds v after the array's last element.
func (st style) appendElement(src []byte, arr *jsonc.Node, v any) []byte {
	if len(arr.Elems) == 0 {
		indent := lineIndent(src, arr.Start)
		inner := indent + st.unit
		return splice(src, arr.Start+1, arr.End-1, "\n"+inner+reindent(st.text(v, true), inner)+"\n"+indent)
	}
	last := arr.Elems[len(arr.Elems)-1]
	if !multiLine(src, arr) {
		return splice(src, last.End, last.End, st.comma+st.text(v, false))
	}
	indent := lineIndent(src, arr.Elems[0].Start)
	return splice(src, last.End, last.End, ",\n"+indent+reindent(st.text(v, true), indent))
}

// removeElement removes element i with its separator; the others keep
// their bytes.
func removeElement(src []byte, arr *jsonc.Node, i int) []byte {
	spans := make([][2]int, len(arr.Elems))
	for j, e := range arr.Elems {
		spans[j] = [2]int{e.Start, e.End}
	}
	return removeSpan(src, arr, spans, i)
}

// removeMember removes the member key (the last one of that name).
func removeMember(src []byte, obj *jsonc.Node, key string) []byte {
	spans := make([][2]int, len(obj.Members))
	idx := -1
	for j, m := range obj.Members {
		end := m.Key.End
		if m.Value != nil {
			end = m.Value.End
		}
		spans[j] = [2]int{m.Key.Start, end}
		if m.Key.Str == key {
			idx = j
		}
	}
	if idx < 0 {
		return src
	}
	return removeSpan(src, obj, spans, idx)
}

// removeSpan removes child i of a container (children given as spans).
func removeSpan(src []byte, n *jsonc.Node, spans [][2]int, i int) []byte {
	switch {
	case len(spans) == 1:
		return splice(src, n.Start+1, n.End-1, "")
	case i == len(spans)-1:
		return splice(src, spans[i-1][1], spans[i][1], "")
	}
	return splice(src, spans[i][0], spans[i+1][0], "")
}

// ---------------------------------------------------------------------------
// editor setup

// EditorSetup is the text install prints after the hooks: how to start the
// language server from VS Code, Neovim and Helix (as in the README), and the
// Claude Code plugin. bin is how editors should call saga-lsp.
func EditorSetup(bin string) string {
	q := store.MarshalString(bin)
	return `Editor setup — the language server speaks LSP on stdio (options: docs/protocol-extensions.md):

VS Code — with a generic LSP client, e.g. "Generic LSP Client (v2)" (zsol.vscode-glspc),
in .vscode/settings.json:

  {
    "glspc.server.command": ` + q + `,
    "glspc.server.commandArguments": ["serve"],
    "glspc.server.languageId": ["json"],
    "glspc.server.initializationOptions": { "sagaNotifications": true }
  }

Neovim (0.10+; on 0.7–0.9 use vim.lsp.start_client + vim.lsp.buf_attach_client):

  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'json',
    callback = function(args)
      local root = vim.fs.root(args.buf, '.saga')
      if root and vim.api.nvim_buf_get_name(args.buf):find('/%.saga/') then
        vim.lsp.start({ name = 'saga-lsp', cmd = { ` + q + ` }, root_dir = root,
                        init_options = { sagaNotifications = true } })
      end
    end,
  })

Helix — ~/.config/helix/languages.toml:

  [language-server.saga-lsp]
  command = ` + q + `

  [[language]]
  name = "json"
  language-servers = ["vscode-json-language-server", "saga-lsp"]

Claude Code — the hooks above keep .saga statuses in sync and scope edits in story
worktrees. For diagnostics in Claude Code too, use the plugin in editors/claude-code of
the saga-lsp repository (claude --plugin-dir <saga-lsp>/editors/claude-code); it ships
the same hooks, so use either the plugin or these settings hooks, not both.
`
}

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
