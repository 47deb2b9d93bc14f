package runs

import "strings"

// HookCommand is the hook command line registered with Claude Code for the
// saga-lsp binary self (Claude Code runs it with a shell).
func HookCommand(self string) string { return ShellQuote(self) + " hook" }

// ShellQuote quotes s for a POSIX shell: words of safe characters stay as
// they are, anything else is single-quoted.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '@' || r == '%' || r == '+' || r == '=' || r == ':' || r == ',' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
