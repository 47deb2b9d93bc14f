// Bash permissions under -p: which commands run without asking (no one can
// be asked, so anything else is refused), approximating Claude Code
// 2.1.330's command checks with the refusal texts it gives.

package agentsim

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// denial is a refused permission: the text the model sees and, for the
// stream's permission_denied line, the reason Claude Code records.
type denial struct {
	msg        string
	reasonType string // "" when Claude Code records none
	reason     string
}

// shellSegment is one simple command of a command line (split at &&, ||,
// ;, |, & and newlines).
type shellSegment struct {
	text      string
	words     []string // unquoted, ~ expanded
	redirects []string // output redirection targets (not /dev/null, not fd duplicates)
}

// shellLine is a parsed command line and the constructs Claude Code cannot
// check before the command runs.
type shellLine struct {
	segments   []shellSegment
	nested     bool // $(…) or `…`
	braces     bool // ${…}
	variable   bool // $NAME (other than $HOME) or $?, $1, …
	assignment bool // NAME=value
}

// parseShell splits a command line the way the permission check needs it:
// quotes and escapes honoured, operators and redirections recognised.
func parseShell(cmd, home string) shellLine {
	var line shellLine
	var seg shellSegment
	var cur strings.Builder
	started, tilde, target, input := false, false, false, false
	segStart := 0
	endWord := func() {
		if !started {
			return
		}
		w := cur.String()
		if tilde && (w == "~" || strings.HasPrefix(w, "~/")) {
			w = home + w[1:]
		}
		switch {
		case target:
			if w != "/dev/null" {
				seg.redirects = append(seg.redirects, w)
			}
		case input:
		default:
			if len(seg.words) == 0 && isAssignment(w) {
				line.assignment = true
			}
			seg.words = append(seg.words, w)
		}
		cur.Reset()
		started, tilde, target, input = false, false, false, false
	}
	endSeg := func(end int) {
		endWord()
		seg.text = strings.TrimSpace(cmd[segStart:end])
		if seg.text != "" {
			line.segments = append(line.segments, seg)
		}
		seg = shellSegment{}
		segStart = end
	}
	dollar := func(i int) {
		if i+1 >= len(cmd) {
			return
		}
		switch c := cmd[i+1]; {
		case c == '(':
			line.nested = true
		case c == '{':
			line.braces = true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(cmd) && (cmd[j] == '_' || cmd[j] >= 'a' && cmd[j] <= 'z' || cmd[j] >= 'A' && cmd[j] <= 'Z' || cmd[j] >= '0' && cmd[j] <= '9') {
				j++
			}
			if cmd[i+1:j] != "HOME" {
				line.variable = true
			}
		case strings.IndexByte("?#@*!$-0123456789", c) >= 0:
			line.variable = true
		}
	}
	inSingle, inDouble := false, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case inSingle:
			if c == '\'' {
				inSingle = false
			} else {
				cur.WriteByte(c)
			}
			continue
		case c == '\\' && i+1 < len(cmd):
			i++
			if inDouble && strings.IndexByte("$`\"\\\n", cmd[i]) < 0 {
				cur.WriteByte('\\')
			}
			cur.WriteByte(cmd[i])
			started = true
			continue
		case inDouble:
			switch c {
			case '"':
				inDouble = false
			case '`':
				line.nested = true
			case '$':
				dollar(i)
			}
			if c != '"' {
				cur.WriteByte(c)
			}
			continue
		}
		switch c {
		case '\'':
			inSingle, started = true, true
		case '"':
			inDouble, started = true, true
		case '`':
			line.nested = true
			cur.WriteByte(c)
			started = true
		case '$':
			dollar(i)
			cur.WriteByte(c)
			started = true
		case ' ', '\t', '(', ')', '{', '}':
			endWord()
		case '\n', ';':
			endSeg(i)
			segStart = i + 1
		case '&', '|':
			if c == '&' && i+1 < len(cmd) && cmd[i+1] == '>' {
				endWord()
				i = redirection(cmd, i+1, &target)
				continue
			}
			endSeg(i)
			if i+1 < len(cmd) && (cmd[i+1] == c || c == '|' && cmd[i+1] == '&') {
				i++
			}
			segStart = i + 1
		case '>':
			if w := cur.String(); started && strings.Trim(w, "0123456789") == "" {
				cur.Reset() // a file descriptor number, not a word
				started = false
			}
			endWord()
			i = redirection(cmd, i, &target)
		case '<':
			endWord()
			input = true
		default:
			if !started && c == '~' {
				tilde = true
			}
			cur.WriteByte(c)
			started = true
		}
	}
	endSeg(len(cmd))
	return line
}

// redirection reads an output redirection operator at cmd[i] ('>'): ">",
// ">>", ">|", or a descriptor duplicate ">&2" (no target). It returns the
// index of its last byte and sets *target when a file name follows.
func redirection(cmd string, i int, target *bool) int {
	if i+1 < len(cmd) && (cmd[i+1] == '>' || cmd[i+1] == '|') {
		i++
	}
	if i+1 < len(cmd) && cmd[i+1] == '&' {
		i++
		for i+1 < len(cmd) && strings.IndexByte("0123456789-", cmd[i+1]) >= 0 {
			i++
		}
		return i
	}
	*target = true
	return i
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// readOnlyPathCommands read the files they name; outside the working
// directories they are blocked with "… may only <phrase> the allowed
// working directories".
func readOnlyPathCommands() map[string]string {
	return map[string]string{
		"ls": "list files in", "cat": "concatenate files from", "head": "read the beginning of files from",
		"tail": "read the end of files from", "wc": "count lines/words/bytes in files from",
		"grep": "search for patterns in files from", "rg": "search for patterns in files from",
		"find": "search files in", "sort": "sort lines of files from", "uniq": "filter lines of files from",
		"diff": "compare files from", "stat": "show the status of files from", "file": "determine the type of files from",
		"tree": "list files in", "du": "estimate the space of files in", "sed": "read files from",
	}
}

// isReadOnlyCommand: commands that only print (no file arguments checked).
func isReadOnlyCommand(name string) bool {
	switch name {
	case "echo", "printf", "pwd", "true", "false", "cd", "date", "whoami", "which", "basename", "dirname",
		"test", "[", "type", "id", "uname", "hostname", "seq":
		return true
	}
	return false
}

// writeCommands change the files they name: allowed inside the working
// directories in acceptEdits mode.
func isWriteCommand(name string) bool {
	switch name {
	case "mkdir", "touch", "rm", "rmdir", "cp", "mv", "ln":
		return true
	}
	return false
}

// readOnlyGit are git subcommands that run without asking.
func isReadOnlyGit(sub string) bool {
	switch sub {
	case "status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "describe", "blame", "shortlog", "remote", "grep":
		return true
	}
	return false
}

// bashPermission is the permission check of a Bash call under -p.
// bypassPermissions and allow rules ("Bash", "Bash(<prefix>:*)",
// "Bash(<command>)") allow it. In the sandbox with autoAllowBashIfSandboxed
// every command is allowed except git's configuration overrides (-c,
// --config-env); dangerouslyDisableSandbox asks to run outside the sandbox
// (refused) unless allowUnsandboxedCommands is false, when it is ignored.
// Without a sandbox only commands whose every part is known to be safe run:
// read-only commands on paths inside the working directories, and in
// acceptEdits mode file changes and output redirections inside them.
// Nested commands, variables and assignments cannot be checked and are
// refused.
func (s *session) bashPermission(in *obj) *denial {
	cmd := in.str("command")
	if s.permMode == "bypassPermissions" || s.bashRuleAllows(cmd) {
		return nil
	}
	line := parseShell(cmd, s.getenv("HOME"))
	if unsandboxed, _ := in.get("dangerouslyDisableSandbox"); s.sandbox.on && unsandboxed == true && s.sandbox.allowUnsandbox {
		return &denial{msg: "Run outside of the sandbox", reasonType: "sandboxOverride", reason: "dangerouslyDisableSandbox"}
	}
	if s.sandbox.on && s.sandbox.autoAllow {
		for _, seg := range line.segments {
			if len(seg.words) > 1 && seg.words[0] == "git" && (slices.Contains(seg.words, "-c") || slices.Contains(seg.words, "--config-env")) {
				return other("This command requires approval")
			}
		}
		return nil
	}
	switch {
	case line.nested:
		return other("A nested command in this command can't be checked before it runs")
	case line.assignment:
		return other("This command requires approval")
	case line.braces:
		return other("A variable in braces in this command can't be checked before it runs")
	case line.variable:
		return other("A variable in this command can't be checked before it runs")
	}
	var approval []string
	for _, seg := range line.segments {
		specific, ask := s.checkSegment(seg)
		if specific != "" {
			return &denial{msg: specific}
		}
		if ask {
			approval = append(approval, seg.text)
		}
	}
	switch {
	case len(approval) == 0:
		return nil
	case len(line.segments) == 1:
		return other("This command requires approval")
	case len(approval) == 1:
		return other("This Bash command contains multiple operations. The following part requires approval: " + approval[0])
	}
	return other("This Bash command contains multiple operations. The following parts require approval: " + strings.Join(approval, ", "))
}

func other(msg string) *denial { return &denial{msg: msg, reasonType: "other", reason: msg} }

// bashRuleAllows reports an allow rule for the whole command.
func (s *session) bashRuleAllows(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	for _, r := range append(splitToolRules(s.args.allowedTools), s.allowRules...) {
		name, bare := ruleTool(r)
		if name != "Bash" {
			continue
		}
		if bare {
			return true
		}
		spec := strings.TrimSuffix(strings.TrimPrefix(r, "Bash("), ")")
		if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
			if cmd == prefix || strings.HasPrefix(cmd, prefix+" ") {
				return true
			}
		} else if cmd == spec {
			return true
		}
	}
	return false
}

// checkSegment checks one simple command: a refusal specific to a path, or
// whether it needs approval.
func (s *session) checkSegment(seg shellSegment) (specific string, ask bool) {
	dirs := "'" + strings.Join(s.workDirs, "', '") + "'"
	edits := s.permMode == "acceptEdits" || s.permMode == "auto"
	changes := func(what, p string) string {
		if !s.insideWorkDirs(p) {
			return fmt.Sprintf("%s '%s' needs approval. The path is outside the working directories for this session (%s). Allowing runs the command as written.", what, p, dirs)
		}
		if !edits {
			return fmt.Sprintf("%s '%s' needs approval. The path is inside the working directories for this session (%s), and Claude Code asks before a shell command creates, changes or removes files there.", what, p, dirs)
		}
		return ""
	}
	for _, t := range seg.redirects {
		if msg := changes("Output redirection to", s.abs(t)); msg != "" {
			return msg, false
		}
	}
	if len(seg.words) == 0 {
		return "", false
	}
	name, args := seg.words[0], seg.words[1:]
	operands := func(skip int) []string {
		var out []string
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, a)
		}
		return out
	}
	inPlace := false
	for _, a := range args {
		inPlace = inPlace || strings.HasPrefix(a, "-i") || a == "--in-place"
	}
	switch phrase, readOnly := readOnlyPathCommands()[name]; {
	case name == "sed" && inPlace:
		for _, p := range operands(1) {
			if msg := changes(name+" in", s.abs(p)); msg != "" {
				return msg, false
			}
		}
		return "", false
	case readOnly:
		skip := 0
		if (name == "grep" || name == "rg" || name == "sed") && !slices.Contains(args, "-e") {
			skip = 1 // the pattern or script
		}
		paths := operands(skip)
		if name == "find" {
			paths = nil
			for _, a := range args {
				if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
					break
				}
				paths = append(paths, a)
			}
		}
		for _, p := range paths {
			if ap := s.abs(p); !s.insideWorkDirs(ap) {
				return fmt.Sprintf("%s in '%s' was blocked. For security, Claude Code may only %s the allowed working directories for this session: %s.", name, ap, phrase, dirs), false
			}
		}
		return "", false
	case isReadOnlyCommand(name):
		return "", false
	case isWriteCommand(name):
		for _, p := range operands(0) {
			if msg := changes(name+" in", s.abs(p)); msg != "" {
				return msg, false
			}
		}
		return "", false
	case name == "git":
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-c" || a == "--config-env":
				return "", true
			case a == "-C":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				return "", !isReadOnlyGit(a)
			}
		}
		return "", true
	}
	return "", true
}

// abs resolves a tool path against the session's cwd.
func (s *session) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	return filepath.Clean(p)
}
