// Package agentsim simulates a headless Claude Code run: `claude -p <prompt>`
// as saga-lsp's worker starts it, with a scripted model instead of a real
// one. It exists so that tests (and the worker's --dry-run) can exercise the
// whole path — flags, task list, hooks, stream-json — without the real
// program or a network.
//
// What it reproduces, following ../shared/claude-code-facts.md (Claude Code
// 2.1.330):
//
//   - The command line: commander-style parsing of claude's flags (unknown
//     flags, missing values and bad choices are errors, exit 2); -p is
//     required; --output-format stream-json without --verbose fails with
//     Claude Code's message and exit 1; --session-id must be a UUID.
//   - The task list: ${CLAUDE_CONFIG_DIR:-$HOME/.claude}/tasks/<list>, the
//     list being CLAUDE_CODE_TASK_LIST_ID, else --session-id, else a random
//     UUID (sanitised for the path). Task files are read and written exactly
//     as Claude Code does: schema validation with unknown keys dropped, the
//     canonical key order, 2-space JSON without a trailing newline, writes
//     through "<id>.json.tmp.<8 hex>" and a rename under the mkdir lock
//     "<id>.json.lock/", TaskCreate numbering under ".lock.lock/" with the
//     .highwatermark rules.
//   - Which tools the model gets: the Task tools only when
//     CLAUDE_CODE_ENABLE_TASKS is not false and --allowedTools / --tools name
//     them or CLAUDE_CODE_ENABLE_TODO_TOOLS=1.
//   - Hooks from --settings (file or inline JSON), the user settings,
//     <cwd>/.claude/settings.json and settings.local.json, and each
//     --plugin-dir's hooks/hooks.json (with ${CLAUDE_PLUGIN_ROOT}); none with
//     --bare. SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
//     TaskCreated, TaskCompleted, Stop and SessionEnd fire with Claude Code's
//     payloads, run as `sh -c` in parallel with the payload on stdin,
//     CLAUDE_PROJECT_DIR in the environment and the configured timeout;
//     exit codes and JSON output (deny/allow, legacy decision:block,
//     hookEventName check, additionalContext) are honoured.
//   - The tools Read, Write, Edit, TaskList, TaskGet, TaskUpdate and
//     TaskCreate, with Claude Code's inputs, checks, results and headless
//     permission rules.
//   - stream-json output: system/init, assistant tool_use and text lines,
//     user tool_result lines with tool_use_result, the final result line;
//     exit 1 when the result is an error.
//
// What the model does is chosen by a Script (see the constants). Run is the
// entry point for in-process use; Main is what the stand-in binary
// testdata/standin/claude calls.
package agentsim
