// Package agentsim simulates a headless Claude Code run: `claude -p <prompt>`
// as saga-lsp's worker starts it, with a scripted model instead of a real
// one. It exists so that tests (and the worker's --dry-run) can exercise the
// whole path — flags, task list, hooks, tools, sandbox, stream-json —
// without the real program or a network.
//
// What it reproduces, following docs/claude-code.md and what the
// real Claude Code 2.1.330 did when run offline (claude-offline):
//
//   - The command line: commander-style parsing of claude's flags (unknown
//     flags, missing values and bad choices are errors, exit 2); -p is
//     required; --output-format stream-json without --verbose fails with
//     Claude Code's message and exit 1; --session-id must be a UUID; model
//     aliases resolve (opus → claude-opus-5-5, the default).
//   - The task list: ${CLAUDE_CONFIG_DIR:-$HOME/.claude}/tasks/<list>, the
//     list being CLAUDE_CODE_TASK_LIST_ID, else --session-id, else a random
//     UUID (sanitised for the path). Task files are read and written exactly
//     as Claude Code does: schema validation with unknown keys dropped, the
//     canonical key order, 2-space JSON without a trailing newline, writes
//     through "<id>.json.tmp.<8 hex>" and a rename under the mkdir lock
//     "<id>.json.lock/", TaskCreate numbering under ".lock.lock/" with the
//     .highwatermark rules.
//   - Which tools the model gets (system/init lists them as 2.1.330 does):
//     the Task tools only when CLAUDE_CODE_ENABLE_TASKS is not false and
//     --allowedTools / --tools name them or CLAUDE_CODE_ENABLE_TODO_TOOLS=1;
//     --disallowedTools removes tools (Bash also takes Monitor and brings
//     Glob and Grep). For current models the Task tools are deferred: the
//     model must load them with ToolSearch ("select:A,B" returns
//     tool_reference blocks); a deferred tool called first still runs when
//     its input is valid, and invalid input gets Claude Code's load-first
//     note. ENABLE_TOOL_SEARCH=false (no ToolSearch) or =auto, and Claude 3
//     models, make them plain tools.
//   - Settings: the user, project (<cwd>/.claude/settings.json) and local
//     (settings.local.json) files — only those --setting-sources lists (a bad
//     source is exit 1) — and --settings (file or inline JSON); the MCP
//     servers of .mcp.json (with project settings, not with
//     --strict-mcp-config) and --mcp-config appear in system/init (none is
//     started). Hooks also from each --plugin-dir's hooks/hooks.json (with
//     ${CLAUDE_PLUGIN_ROOT}); none with --bare.
//   - Hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
//     TaskCreated, TaskCompleted, Stop and SessionEnd fire with 2.1.330's
//     payloads (prompt_id, effort; no permission_mode where it sends none),
//     run as `sh -c` in parallel with the payload on stdin, the process's
//     environment plus CLAUDE_PROJECT_DIR, and the configured timeout; exit
//     codes and JSON output (deny/allow, legacy decision:block,
//     hookEventName check, additionalContext) are honoured. TaskCompleted
//     runs before a completion is written; hooks exiting 2 veto it: TaskUpdate
//     answers {success:false, taskId, updatedFields:[], error} with each
//     blocking hook's "TaskCompleted hook feedback:\n[<command>]: <stderr>".
//   - The tools Read, Write, Edit, Bash, ToolSearch, TaskList, TaskGet (never
//     showing metadata), TaskUpdate and TaskCreate, with Claude Code's
//     inputs, validation texts, results and headless permission rules.
//     Bash without a sandbox runs only what -p may run without asking (see
//     bashPermission: read-only commands inside the working directories,
//     file changes there in acceptEdits; nested commands and variables are
//     refused) with Claude Code's refusal texts. With the sandbox settings
//     (sandbox.enabled, autoAllowBashIfSandboxed, allowUnsandboxedCommands,
//     filesystem.allowWrite, filesystem.denyWrite) commands really run
//     under bubblewrap laid out as Claude Code's (bwrapCommand): a
//     worktree's common git dir writable unless denied, a denied path
//     read-only even around an allowed one; leaving its placeholder files when
//     interrupted; without bwrap or socat the sandbox is off with Claude
//     Code's warning. The network is not confined.
//   - stream-json output: system/init, hook_started/hook_response,
//     permission_denied, assistant tool_use and text lines, user tool_result
//     lines with tool_use_result, the final result line with 2.1.330's
//     fields (terminal_reason, errors, usage, …; total_cost_usd is 0, or
//     $SAGA_STANDIN_COST_USD when a test prices the scripted model); exit 1
//     when --max-turns stops the run.
//   - Signals: SIGINT interrupts the run as it interrupts `claude -p` — the
//     running tool and hooks are killed (an interrupted TaskCompleted hook
//     does not veto), the stream ends with "[Request interrupted by user…]"
//     and an error_during_execution result, SessionEnd runs, exit 0. SIGTERM
//     stops at once with exit 143 and no result.
//
// What the model does is chosen by a Script (see the constants); lines
// "SIMAGENT bash <command>" in the prompt or in a task's description make it
// run Bash commands and report what it saw (runDirectives). Run is the
// entry point for in-process use; Main is what the stand-in binary
// testdata/standin/claude and `saga-lsp __agent` call.
package agentsim
