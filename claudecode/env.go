package claudecode

// Claude Code's own environment variables (docs/claude-code.md). saga-lsp
// sets the first three for a headless run and reads the rest in its hook.
const (
	// EnvTaskListID chooses the task list of a claude process.
	EnvTaskListID = "CLAUDE_CODE_TASK_LIST_ID"
	// EnvEnableTasks switches the Task tools on (tri-state boolean).
	EnvEnableTasks = "CLAUDE_CODE_ENABLE_TASKS"
	// EnvConfigDir is Claude Code's configuration directory.
	EnvConfigDir = "CLAUDE_CONFIG_DIR"
	// EnvToolSearch=false makes deferred tools (the Task tools in 2.1.330)
	// plain tools, offered without a ToolSearch turn.
	EnvToolSearch = "ENABLE_TOOL_SEARCH"
	// EnvProjectDir is given to every command hook.
	EnvProjectDir = "CLAUDE_PROJECT_DIR"
	// EnvEnvFile is the file a SessionStart hook appends `export` lines to.
	EnvEnvFile = "CLAUDE_ENV_FILE"
)

// The Claude Code release saga-lsp is built and tested against
// (docs/claude-code.md), as its npm package: what a GitHub Actions job
// installs (runs/github).
const (
	Version    = "2.1.330"
	NPMPackage = "@anthropic-ai/claude-code"
)

// The credentials Claude Code authenticates with, one of which a headless
// run needs: an API key, or the long-lived token of `claude setup-token`.
const (
	EnvAPIKey     = "ANTHROPIC_API_KEY"
	EnvOAuthToken = "CLAUDE_CODE_OAUTH_TOKEN"
)
