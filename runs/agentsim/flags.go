package agentsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// cliArgs is the parsed command line of the simulated claude.
type cliArgs struct {
	print, verbose, bare, skipPermissions, help, version bool
	resume, cont                                         bool
	strictMCP                                            bool

	prompt     string
	havePrompt bool

	outputFormat   string
	inputFormat    string
	model          string
	permissionMode string
	settings       string
	sessionID      string
	settingSources string
	haveSources    bool
	maxTurns       int

	allowedTools    []string
	disallowedTools []string
	tools           []string
	haveTools       bool
	addDirs         []string
	pluginDirs      []string
	mcpConfigs      []string
}

type optKind int

const (
	optBool     optKind = iota
	optValue            // <value>: takes the next argument, whatever it is
	optOptional         // [value]: takes the next argument unless it starts with '-'
	optVariadic         // <values...>: takes the next argument and every following one not starting with '-'
)

type optSpec struct {
	kind    optKind
	flags   string // as commander prints it in errors, e.g. "--model <model>"
	choices []string
	apply   func(a *cliArgs, v string) error
}

// optionTable lists the flags claude 2.1.x accepts (long names and aliases).
// Flags the simulation does not act on are accepted and ignored.
func optionTable() map[string]*optSpec {
	options := map[string]*optSpec{}
	ignoreBool := func(*cliArgs, string) error { return nil }
	ignore := func(*cliArgs, string) error { return nil }
	add := func(spec *optSpec, names ...string) {
		for _, n := range names {
			options[n] = spec
		}
	}
	add(&optSpec{kind: optBool, flags: "-p, --print", apply: func(a *cliArgs, _ string) error { a.print = true; return nil }}, "-p", "--print")
	add(&optSpec{kind: optBool, flags: "--verbose", apply: func(a *cliArgs, _ string) error { a.verbose = true; return nil }}, "--verbose")
	add(&optSpec{kind: optBool, flags: "--bare", apply: func(a *cliArgs, _ string) error { a.bare = true; return nil }}, "--bare")
	add(&optSpec{kind: optBool, flags: "--dangerously-skip-permissions", apply: func(a *cliArgs, _ string) error { a.skipPermissions = true; return nil }}, "--dangerously-skip-permissions")
	add(&optSpec{kind: optBool, flags: "-h, --help", apply: func(a *cliArgs, _ string) error { a.help = true; return nil }}, "-h", "--help")
	add(&optSpec{kind: optBool, flags: "-v, --version", apply: func(a *cliArgs, _ string) error { a.version = true; return nil }}, "-v", "--version")
	add(&optSpec{kind: optBool, flags: "-c, --continue", apply: func(a *cliArgs, _ string) error { a.cont = true; return nil }}, "-c", "--continue")
	for _, n := range []string{"--allow-dangerously-skip-permissions", "--include-partial-messages", "--replay-user-messages",
		"--mcp-debug", "--ide", "--disable-slash-commands", "--no-session-persistence",
		"--fork-session", "--chrome", "--no-chrome"} {
		add(&optSpec{kind: optBool, flags: n, apply: ignoreBool}, n)
	}
	add(&optSpec{kind: optBool, flags: "--strict-mcp-config", apply: func(a *cliArgs, _ string) error { a.strictMCP = true; return nil }}, "--strict-mcp-config")
	add(&optSpec{kind: optOptional, flags: "-d, --debug [filter]", apply: ignore}, "-d", "--debug")
	add(&optSpec{kind: optOptional, flags: "-r, --resume [value]", apply: func(a *cliArgs, _ string) error { a.resume = true; return nil }}, "-r", "--resume")

	add(&optSpec{kind: optValue, flags: "--output-format <format>", choices: []string{"text", "json", "stream-json"},
		apply: func(a *cliArgs, v string) error { a.outputFormat = v; return nil }}, "--output-format")
	add(&optSpec{kind: optValue, flags: "--input-format <format>", choices: []string{"text", "stream-json"},
		apply: func(a *cliArgs, v string) error { a.inputFormat = v; return nil }}, "--input-format")
	add(&optSpec{kind: optValue, flags: "--model <model>", apply: func(a *cliArgs, v string) error { a.model = v; return nil }}, "--model")
	add(&optSpec{kind: optValue, flags: "--permission-mode <mode>",
		choices: []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"},
		apply:   func(a *cliArgs, v string) error { a.permissionMode = v; return nil }}, "--permission-mode")
	add(&optSpec{kind: optValue, flags: "--settings <file-or-json>", apply: func(a *cliArgs, v string) error { a.settings = v; return nil }}, "--settings")
	add(&optSpec{kind: optValue, flags: "--session-id <uuid>", apply: func(a *cliArgs, v string) error { a.sessionID = v; return nil }}, "--session-id")
	add(&optSpec{kind: optValue, flags: "--setting-sources <sources>", apply: func(a *cliArgs, v string) error {
		a.settingSources, a.haveSources = v, true
		return nil
	}}, "--setting-sources")
	add(&optSpec{kind: optValue, flags: "--max-turns <turns>", apply: func(a *cliArgs, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("error: option '--max-turns <turns>' argument '%s' is invalid.", v)
		}
		a.maxTurns = n
		return nil
	}}, "--max-turns")
	for _, f := range []string{"--system-prompt <prompt>", "--system-prompt-file <file>", "--append-system-prompt <prompt>",
		"--append-system-prompt-file <file>", "--fallback-model <model>", "--agent <agent>", "--agents <json>",
		"--json-schema <schema>", "--max-budget-usd <amount>", "--permission-prompt-tool <tool>", "--debug-file <path>",
		"--effort <level>", "-n, --name <name>"} {
		spec := &optSpec{kind: optValue, flags: f, apply: ignore}
		for _, part := range strings.Fields(f) {
			if strings.HasPrefix(part, "-") {
				add(spec, strings.TrimSuffix(part, ","))
			}
		}
	}

	add(&optSpec{kind: optVariadic, flags: "--allowedTools, --allowed-tools <tools...>",
		apply: func(a *cliArgs, v string) error { a.allowedTools = append(a.allowedTools, v); return nil }}, "--allowedTools", "--allowed-tools")
	add(&optSpec{kind: optVariadic, flags: "--disallowedTools, --disallowed-tools <tools...>",
		apply: func(a *cliArgs, v string) error { a.disallowedTools = append(a.disallowedTools, v); return nil }}, "--disallowedTools", "--disallowed-tools")
	add(&optSpec{kind: optVariadic, flags: "--tools <tools...>",
		apply: func(a *cliArgs, v string) error { a.tools, a.haveTools = append(a.tools, v), true; return nil }}, "--tools")
	add(&optSpec{kind: optVariadic, flags: "--add-dir <directories...>",
		apply: func(a *cliArgs, v string) error { a.addDirs = append(a.addDirs, v); return nil }}, "--add-dir")
	add(&optSpec{kind: optVariadic, flags: "--plugin-dir <paths...>",
		apply: func(a *cliArgs, v string) error { a.pluginDirs = append(a.pluginDirs, v); return nil }}, "--plugin-dir")
	add(&optSpec{kind: optVariadic, flags: "--mcp-config <configs...>",
		apply: func(a *cliArgs, v string) error { a.mcpConfigs = append(a.mcpConfigs, v); return nil }}, "--mcp-config")
	for _, f := range []string{"--betas <betas...>", "--file <specs...>"} {
		add(&optSpec{kind: optVariadic, flags: f, apply: ignore}, strings.Fields(f)[0])
	}
	return options
}

// parseArgs parses argv the way claude's command-line library (commander)
// does: "--opt value" and "--opt=value"; a required value is the next
// argument whatever it looks like; a variadic option keeps taking arguments
// until one starts with '-' (so a prompt after "--allowedTools A B" would be
// swallowed, as with the real CLI); "--" ends the options; the one
// positional argument is the prompt.
func parseArgs(argv []string) (*cliArgs, error) {
	a := &cliArgs{outputFormat: "text", inputFormat: "text"}
	options := optionTable()
	var positional []string
	var variadic *optSpec
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			positional = append(positional, argv[i+1:]...)
			break
		}
		if len(arg) > 1 && arg[0] == '-' {
			variadic = nil
			name, val, hasVal := arg, "", false
			if strings.HasPrefix(arg, "--") {
				name, val, hasVal = strings.Cut(arg, "=")
			}
			spec := options[name]
			if spec == nil {
				return nil, fmt.Errorf("error: unknown option '%s'", arg)
			}
			switch spec.kind {
			case optBool:
				if hasVal {
					return nil, fmt.Errorf("error: unknown option '%s'", arg)
				}
			case optValue, optVariadic:
				if !hasVal {
					if i+1 >= len(argv) {
						return nil, fmt.Errorf("error: option '%s' argument missing", spec.flags)
					}
					i++
					val = argv[i]
				}
				if spec.kind == optVariadic {
					variadic = spec
				}
			case optOptional:
				if !hasVal && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
					i++
					val = argv[i]
				}
			}
			if spec.choices != nil && !slices.Contains(spec.choices, val) {
				return nil, fmt.Errorf("error: option '%s' argument '%s' is invalid. Allowed choices are %s.",
					spec.flags, val, strings.Join(spec.choices, ", "))
			}
			if err := spec.apply(a, val); err != nil {
				return nil, err
			}
			continue
		}
		if variadic != nil {
			if err := variadic.apply(a, arg); err != nil {
				return nil, err
			}
			continue
		}
		positional = append(positional, arg)
	}
	switch len(positional) {
	case 0:
	case 1:
		a.prompt, a.havePrompt = positional[0], true
	default:
		return nil, fmt.Errorf("error: too many arguments. Expected 1 argument but got %d.", len(positional))
	}
	return a, nil
}

// splitToolRules splits --allowedTools / --tools values: comma or space
// separated, but a rule's "(…)" specifier may itself hold spaces or commas.
func splitToolRules(values []string) []string {
	var out []string
	for _, v := range values {
		depth := 0
		start := 0
		flush := func(end int) {
			if r := strings.TrimSpace(v[start:end]); r != "" {
				out = append(out, r)
			}
		}
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case c == '(':
				depth++
			case c == ')':
				if depth > 0 {
					depth--
				}
			case (c == ',' || c == ' ' || c == '\t' || c == '\n') && depth == 0:
				flush(i)
				start = i + 1
			}
		}
		flush(len(v))
	}
	return out
}

// ruleTool is the tool name of a permission rule ("Bash(git:*)" → "Bash").
func ruleTool(rule string) (name string, bare bool) {
	if i := strings.IndexByte(rule, '('); i >= 0 {
		return rule[:i], false
	}
	return rule, true
}

const usageText = `Usage: claude [options] [command] [prompt]

Claude Code (simulated by agentsim: headless -p runs only)

Arguments:
  prompt                                            Your prompt

Options:
  -p, --print                                       Print response and exit (useful for pipes)
  --output-format <format>                          "text" (default), "json", or "stream-json"
  --verbose                                         Override verbose mode setting from config
  --model <model>                                   Model for the current session
  --permission-mode <mode>                          Permission mode to use for the session
  --dangerously-skip-permissions                    Bypass all permission checks
  --allowedTools, --allowed-tools <tools...>        Comma or space-separated list of tool names to allow
  --disallowedTools, --disallowed-tools <tools...>  Comma or space-separated list of tool names to deny
  --tools <tools...>                                Specify the list of available tools from the built-in set
  --settings <file-or-json>                         Path to a settings JSON file or a JSON string
  --setting-sources <sources>                       Comma-separated list of setting sources to load (user, project, local)
  --add-dir <directories...>                        Additional directories to allow tool access to
  --plugin-dir <paths...>                           Load plugins from directories for this session only
  --session-id <uuid>                               Use a specific session ID for the conversation
  --max-turns <turns>                               Maximum number of agentic turns
  --bare                                            Minimal mode: skip hooks and plugins
  -v, --version                                     Output the version number
  -h, --help                                        Display help for command
`
