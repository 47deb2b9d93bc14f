// Which tools the model gets, which of them are deferred (loaded through
// ToolSearch first), and the ToolSearch tool itself.

package agentsim

import (
	"slices"
	"sort"
	"strings"
)

// builtinTools are the tools a 2.1.330 session offers by default. Only
// Read, Write, Edit, Bash, ToolSearch and the Task tools do anything here;
// the rest appear in system/init as a real session lists them.
func builtinTools() []string {
	return []string{"Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
		"ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
		"TaskStop", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write"}
}

// taskToolNames are the Task tools, offered only when named (see decideTools).
func taskToolNames() []string { return []string{"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"} }

// deferrableTools are the tools 2.1.330 defers: the model sees their names
// and must load them with ToolSearch.
func deferrableTools() []string {
	return []string{"CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Monitor", "NotebookEdit",
		"SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch"}
}

// resolveModel turns a --model alias into the model ID a 2.1.330 session
// reports (no --model: the default, Opus).
func resolveModel(m string) string {
	switch m {
	case "", "default", "opus":
		return "claude-opus-5-5"
	case "sonnet":
		return "claude-sonnet-5-5"
	case "haiku":
		return "claude-haiku-5-5"
	}
	return m
}

// parseTri reads a tri-state boolean: 1/true/yes/on, 0/false/no/off, else
// unset (0 = unset, 1 = true, -1 = false).
func parseTri(v string) int {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return 1
	case "0", "false", "no", "off":
		return -1
	}
	return 0
}

// decideTools works out the tools offered to the model. Built-in tools are
// offered unless --tools leaves them out or a bare deny rule removes them
// (denying Bash also removes Monitor and brings Glob and Grep, as 2.1.330
// does). The Task tools: off when CLAUDE_CODE_ENABLE_TASKS is false (the old
// TodoWrite comes back); otherwise offered only when
// CLAUDE_CODE_ENABLE_TODO_TOOLS=1 or when --allowedTools / --tools name
// them (each named one is offered). ToolSearch is off when
// ENABLE_TOOL_SEARCH is false. Then decideDeferral.
func (s *session) decideTools() {
	a := s.args
	s.available = map[string]bool{}
	var toolsList []string
	if a.haveTools {
		toolsList = splitToolRules(a.tools)
	}
	inTools := map[string]bool{}
	defaultTools := !a.haveTools
	for _, t := range toolsList {
		if t == "default" {
			defaultTools = true
		}
		inTools[t] = true
	}
	named := map[string]bool{}
	for _, r := range append(splitToolRules(a.allowedTools), toolsList...) {
		name, _ := ruleTool(r)
		named[name] = true
	}
	denied := map[string]bool{}
	for _, r := range append(splitToolRules(a.disallowedTools), s.denyRules...) {
		if name, bare := ruleTool(r); bare {
			denied[name] = true
		}
	}
	if parseTri(s.getenv("ENABLE_TOOL_SEARCH")) < 0 {
		denied["ToolSearch"] = true
	}
	offered := func(t string) bool { return (defaultTools || inTools[t]) && !denied[t] }
	builtins := builtinTools()
	if denied["Bash"] {
		denied["Monitor"] = true
		builtins = append(builtins, "Glob", "Grep")
	}
	for _, t := range builtins {
		if offered(t) {
			s.available[t] = true
		}
	}
	if parseTri(s.getenv("CLAUDE_CODE_ENABLE_TASKS")) < 0 {
		if offered("TodoWrite") {
			s.available["TodoWrite"] = true
		}
	} else {
		todo := parseTri(s.getenv("CLAUDE_CODE_ENABLE_TODO_TOOLS")) > 0
		for _, t := range taskToolNames() {
			if (todo || named[t]) && (defaultTools || inTools[t]) && !denied[t] {
				s.available[t] = true
			}
		}
	}
	s.taskTools = s.available["TaskList"] && s.available["TaskUpdate"]
	s.decideDeferral()
}

// decideDeferral marks the deferrable tools on offer as deferred when
// ToolSearch is on offer, ENABLE_TOOL_SEARCH is not "auto" (which defers
// only MCP tools) and the model can take tool references (Claude 3 models
// cannot).
func (s *session) decideDeferral() {
	s.deferred = map[string]bool{}
	mode := strings.ToLower(strings.TrimSpace(s.getenv("ENABLE_TOOL_SEARCH")))
	if !s.available["ToolSearch"] || mode == "auto" || strings.HasPrefix(mode, "auto:") || strings.HasPrefix(s.model, "claude-3") {
		return
	}
	for _, t := range deferrableTools() {
		if s.available[t] {
			s.deferred[t] = true
			s.deferredCount++
		}
	}
}

// toolList is system/init's "tools": the offered tools, "Task" first and
// the rest in alphabetical order, as 2.1.330 lists them (deferred ones
// included).
func (s *session) toolList() []string {
	var out []string
	for t := range s.available {
		if t != "Task" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	if s.available["Task"] {
		out = append([]string{"Task"}, out...)
	}
	return out
}

// toolSearch is the ToolSearch tool. "select:A,B" loads the named tools
// (any offered tool matches; deferred ones become loaded). A keyword query
// matches the deferred tools whose name contains a query word, those with
// more matching words first, at most max_results (default 5) — a simple
// stand-in for Claude Code's ranking. The model sees one tool_reference
// block per match.
func (s *session) toolSearch(in *obj) toolResult {
	query := in.str("query")
	limit := 5
	if v, ok := in.get("max_results"); ok {
		if n, isNum := v.(float64); isNum && n >= 1 {
			limit = int(n)
		}
	}
	var matches []string
	if names, ok := strings.CutPrefix(query, "select:"); ok {
		for _, n := range strings.Split(names, ",") {
			if n = strings.TrimSpace(n); s.available[n] && !slices.Contains(matches, n) {
				matches = append(matches, n)
			}
		}
	} else {
		words := strings.Fields(strings.ToLower(query))
		score := map[string]int{}
		for _, t := range deferrableTools() {
			if !s.available[t] {
				continue
			}
			for _, w := range words {
				if strings.Contains(strings.ToLower(t), w) {
					score[t]++
				}
			}
			if score[t] > 0 {
				matches = append(matches, t)
			}
		}
		sort.SliceStable(matches, func(i, j int) bool { return score[matches[i]] > score[matches[j]] })
		if len(matches) > limit {
			matches = matches[:limit]
		}
	}
	res := toolResult{structured: newObj("matches", nonNil(matches), "query", query, "total_deferred_tools", s.deferredCount)}
	if len(matches) == 0 {
		res.text = "No matching deferred tools found"
		return res
	}
	for _, m := range matches {
		delete(s.deferred, m)
		res.blocks = append(res.blocks, newObj("type", "tool_reference", "tool_name", m))
	}
	return res
}
