package worker

// bashSandboxNeeds: Claude Code has no Bash sandbox on Windows; the worker
// refuses to start here (supervise.Supervised) before it asks.
func bashSandboxNeeds() (programs []string, install string) {
	return []string{"bwrap", "socat"}, "run saga-lsp in WSL"
}
