package agentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// defaultHookTimeout applies when a hook sets no "timeout" (seconds).
const defaultHookTimeout = 600 * time.Second

// hookCmd is one {"type":"command"} hook.
type hookCmd struct {
	command    string // ${CLAUDE_PLUGIN_ROOT} already expanded for plugin hooks
	timeout    time.Duration
	pluginRoot string // set for hooks from a plugin
	// blockOnFailure: "onFailure" other than "continue" — a failure of the
	// hook (not started, killed, timed out, an exit other than 0 and 2)
	// counts as exit 2. Simulated where saga-lsp sets it: PreToolUse.
	blockOnFailure bool
}

type hookGroup struct {
	matcher string
	hooks   []hookCmd
}

// addHooks appends a document's command hooks to s.hooks. Hooks of other
// types (prompt, agent, http) are not simulated and are skipped.
func (s *session) addHooks(doc *settingsDoc, pluginRoot string) {
	if doc.DisableAllHooks {
		s.hooksDisabled = true
	}
	for event, groups := range doc.Hooks {
		for _, g := range groups {
			hg := hookGroup{matcher: g.Matcher}
			for _, h := range g.Hooks {
				if h.Type != "command" || h.Command == "" {
					continue
				}
				c := hookCmd{command: h.Command, timeout: defaultHookTimeout, pluginRoot: pluginRoot,
					blockOnFailure: h.OnFailure != "" && h.OnFailure != "continue"}
				if h.Timeout != nil && *h.Timeout > 0 {
					c.timeout = time.Duration(*h.Timeout * float64(time.Second))
				}
				if pluginRoot != "" {
					c.command = strings.ReplaceAll(c.command, "${CLAUDE_PLUGIN_ROOT}", pluginRoot)
				}
				hg.hooks = append(hg.hooks, c)
			}
			s.hooks[event] = append(s.hooks[event], hg)
		}
	}
}

// loadPlugin loads a plugin directory's hooks: hooks/hooks.json, plus a
// "hooks" entry of .claude-plugin/plugin.json (a path relative to the
// plugin, or an inline object).
func (s *session) loadPlugin(dir string) {
	root := dir
	if !filepath.IsAbs(root) {
		root = filepath.Join(s.cwd, root)
	}
	root = filepath.Clean(root)
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintf(s.stderr, "Plugin directory not found: %s\n", dir)
		return
	}
	name := filepath.Base(root)
	var manifest struct {
		Name  string          `json:"name"`
		Hooks json.RawMessage `json:"hooks"`
	}
	if data, err := os.ReadFile(filepath.Join(root, ".claude-plugin", "plugin.json")); err == nil {
		if json.Unmarshal(data, &manifest) == nil && manifest.Name != "" {
			name = manifest.Name
		}
	}
	s.plugins = append(s.plugins, newObj("name", name, "path", root))
	paths := []string{filepath.Join(root, "hooks", "hooks.json")}
	var inline *settingsDoc
	if len(manifest.Hooks) > 0 {
		var p string
		if json.Unmarshal(manifest.Hooks, &p) == nil {
			p = filepath.Join(root, p)
			if p != paths[0] {
				paths = append(paths, p)
			}
		} else {
			inline = &settingsDoc{}
			if json.Unmarshal(manifest.Hooks, inline) != nil || inline.Hooks == nil {
				// The manifest may hold the event map directly.
				inline = &settingsDoc{}
				if json.Unmarshal(manifest.Hooks, &inline.Hooks) != nil {
					inline = nil
				}
			}
		}
	}
	for _, p := range paths {
		doc, err := readSettings(p)
		if err != nil {
			fmt.Fprintf(s.stderr, "Plugin %s: ignoring hooks: %v\n", name, err)
			continue
		}
		if doc != nil {
			s.addHooks(doc, root)
		}
	}
	if inline != nil {
		s.addHooks(inline, root)
	}
}

// matchHook is Claude Code's matcher test: empty or "*" matches all; a
// matcher of only [a-zA-Z0-9_|] is an exact name or an "A|B" list; anything
// else is an unanchored regular expression (an invalid one matches nothing).
func matchHook(matcher, query string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	simple := true
	for _, r := range matcher {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '|') {
			simple = false
			break
		}
	}
	if simple {
		if strings.Contains(matcher, "|") {
			for _, part := range strings.Split(matcher, "|") {
				if strings.TrimSpace(part) == query {
					return true
				}
			}
			return false
		}
		return matcher == query
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		return false
	}
	return re.MatchString(query)
}

// matching returns the command hooks for an event, deduplicated by command
// string (first position, last definition), as Claude Code does. An empty
// query (events without a matcher) selects every group.
func (s *session) matching(event, query string) []hookCmd {
	if s.bare || s.hooksDisabled {
		return nil
	}
	var out []hookCmd
	index := map[string]int{}
	for _, g := range s.hooks[event] {
		if query != "" && !matchHook(g.matcher, query) {
			continue
		}
		for _, h := range g.hooks {
			if i, ok := index[h.command]; ok {
				out[i] = h
				continue
			}
			index[h.command] = len(out)
			out = append(out, h)
		}
	}
	return out
}

// hookRun is the outcome of one hook command.
type hookRun struct {
	cmd            hookCmd
	exitCode       int // -1 when it was killed or could not start
	stdout, stderr string
	timedOut       bool
	err            error
	finished       int64 // the order in which the event's hooks finished (1, 2, …)
}

// output is the hook's JSON output: only for exit 0 and stdout starting
// with '{' that parses as an object. A hookSpecificOutput whose
// hookEventName is not the event makes the output invalid (rejected).
func (r *hookRun) output(event string) (o *obj, rejected bool) {
	if r.exitCode != 0 {
		return nil, false
	}
	out := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(out, "{") {
		return nil, false
	}
	v, err := parseJSON([]byte(out))
	if err != nil {
		return nil, false // treated as plain text
	}
	o, ok := v.(*obj)
	if !ok {
		return nil, false
	}
	if hv, ok := o.get("hookSpecificOutput"); ok {
		h, isObj := hv.(*obj)
		if !isObj || h.str("hookEventName") != event {
			return nil, true
		}
	}
	return o, false
}

// specific is hookSpecificOutput of an accepted JSON output.
func specific(o *obj) *obj {
	v, _ := o.get("hookSpecificOutput")
	h, _ := v.(*obj)
	return h
}

// runHooks runs every matching command hook of an event in parallel, each
// as `sh -c <command>` in the session's cwd with the payload and a newline
// on stdin, and returns the outcomes in configuration order.
func (s *session) runHooks(event, query string, payload *obj, extraEnv ...string) []*hookRun {
	cmds := s.matching(event, query)
	if len(cmds) == 0 {
		return nil
	}
	input := stringify(payload, "") + "\n"
	runs := make([]*hookRun, len(cmds))
	var wg sync.WaitGroup
	var finished atomic.Int64
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = s.runHook(event, c, input, extraEnv)
			runs[i].finished = finished.Add(1)
		}()
	}
	wg.Wait()
	return runs
}

func (s *session) runHook(event string, c hookCmd, input string, extraEnv []string) *hookRun {
	r := &hookRun{cmd: c, exitCode: -1}
	// An interrupt kills the hooks of the step it stops, not SessionEnd's.
	parent := s.ictx
	if event == "SessionEnd" {
		parent = s.ctx
	}
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.command)
	cmd.Dir = s.cwd
	env := append(append([]string(nil), s.environ...), "CLAUDE_PROJECT_DIR="+s.cwd)
	if c.pluginRoot != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+c.pluginRoot)
	}
	cmd.Env = append(env, extraEnv...)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = supervise.OwnGroup()
	cmd.Cancel = func() error { supervise.KillGroup(cmd.Process.Pid); return nil }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	r.stdout, r.stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.exitCode = 0
	case errors.As(err, &ee) && ee.Exited():
		r.exitCode = ee.ExitCode()
	default:
		r.err = err
	}
	if ctx.Err() == context.DeadlineExceeded {
		r.timedOut = true
		r.exitCode = -1
	}
	return r
}

// basePayload has the fields a hook payload starts with, as 2.1.330 sends
// them: SessionStart only the common three and the event; the events of a
// prompt add its prompt_id; those that concern the model's turn
// (UserPromptSubmit, PreToolUse, PostToolUse, Stop) add permission_mode,
// and all but UserPromptSubmit of these the effort level. TaskCreated,
// TaskCompleted and SessionEnd have no permission_mode.
func (s *session) basePayload(event string) *obj {
	o := newObj("session_id", s.sessionID, "transcript_path", s.transcriptPath, "cwd", s.cwd)
	if event != "SessionStart" {
		o.set("prompt_id", s.promptID)
	}
	switch event {
	case "UserPromptSubmit":
		o.set("permission_mode", s.permMode)
	case "PreToolUse", "PostToolUse", "Stop":
		o.set("permission_mode", s.permMode)
		o.set("effort", newObj("level", "medium"))
	}
	o.set("hook_event_name", event)
	return o
}

// preToolDecision is the aggregated PreToolUse outcome.
type preToolDecision struct {
	blocked      bool
	message      string // what the model sees when blocked
	allow        bool   // a hook answered "allow": skip the permission check
	updatedInput *obj
}

// preToolUse runs the PreToolUse hooks for a call. Exit 2 blocks with the
// hook's stderr; exit 0 JSON may deny (hookSpecificOutput.permissionDecision
// "deny", or the legacy {"decision":"block"}), allow, ask or defer; the
// first decision stands unless a later hook denies. Any other exit is a
// non-blocking error.
func (s *session) preToolUse(tool, toolUseID string, input *obj) preToolDecision {
	p := s.basePayload("PreToolUse")
	p.set("tool_name", tool)
	p.set("tool_input", input)
	p.set("tool_use_id", toolUseID)
	var d preToolDecision
	decision, reason := "", ""
	for _, r := range s.runHooks("PreToolUse", tool, p) {
		if r.cmd.blockOnFailure && r.exitCode != 0 && r.exitCode != 2 && !d.blocked {
			why := "failed"
			if r.timedOut {
				why = "timed out"
			}
			d.blocked = true
			d.message = fmt.Sprintf("PreToolUse:%s hook error: [%s]: %s; blocking because onFailure is \"block\"", tool, r.cmd.command, why)
			continue
		}
		if r.exitCode == 2 && !d.blocked {
			d.blocked = true
			d.message = fmt.Sprintf("PreToolUse:%s hook blocking error from command: %q: %s", tool, r.cmd.command, strings.TrimSpace(r.stderr))
			continue
		}
		o, _ := r.output("PreToolUse")
		if o == nil {
			continue
		}
		dec, why := "", ""
		if h := specific(o); h != nil {
			dec, why = h.str("permissionDecision"), h.str("permissionDecisionReason")
			if u, ok := h.get("updatedInput"); ok {
				if uo, isObj := u.(*obj); isObj {
					d.updatedInput = uo
				}
			}
		}
		if dec == "" {
			switch o.str("decision") {
			case "block":
				dec, why = "deny", o.str("reason")
			case "approve":
				dec, why = "allow", o.str("reason")
			}
		}
		if dec != "" && (decision == "" || dec == "deny") {
			decision, reason = dec, why
		}
	}
	if d.blocked {
		return d
	}
	switch decision {
	case "deny":
		d.blocked = true
		d.message = fmt.Sprintf("Hook PreToolUse:%s denied this tool", tool)
		if reason != "" {
			d.message += ": " + reason
		}
	case "allow":
		d.allow = true
	}
	return d
}
