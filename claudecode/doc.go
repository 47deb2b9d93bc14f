// Package claudecode owns Claude Code's side of saga-lsp: the environment
// names and config dir Claude Code reads, the oldest release saga-lsp runs
// and the one parse of `claude --version` (version.go: MinVersion,
// ParseVersion, CheckVersion), the table of hooks saga-lsp registers
// (hooks.go), and the bridge between SAGA stories and Claude
// Code's own task storage (${CLAUDE_CONFIG_DIR:-~/.claude}/tasks/<list>/<id>.json):
// the stored task format, byte for byte as Claude Code writes it (key order,
// 2-space JSON.stringify output, no trailing newline), the list and task
// directories and their sanitised names, the saga__<story>__<ms> list ids,
// the conversion from store.Task (ToClaudeTask, FromStory) and back (only the
// status), hydration of a story into a new list, reading a list back, and
// Claude Code's mkdir-based locks (list lock <dir>/.lock.lock/, task lock
// <dir>/<id>.json.lock/, stale after 10 s) with atomic updates through
// <id>.json.tmp.<8 hex> temp files.
//
// The contract is docs/claude-code.md#task-storage.
// A file this package writes is a fixed point of Claude Code's read and
// write: JSON.stringify(JSON.parse(file), null, 2) gives the same bytes.
package claudecode
