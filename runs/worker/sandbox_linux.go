package worker

// bashSandboxNeeds are the programs Claude Code's Bash sandbox runs on
// Linux, and how to install them.
func bashSandboxNeeds() (programs []string, install string) {
	return []string{"bwrap", "socat"}, "apt-get install bubblewrap socat"
}
