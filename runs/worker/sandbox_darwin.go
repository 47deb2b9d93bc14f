package worker

// bashSandboxNeeds are the programs Claude Code's Bash sandbox runs on
// macOS: Seatbelt's sandbox-exec, which ships with the system.
func bashSandboxNeeds() (programs []string, install string) {
	return []string{"sandbox-exec"}, "it ships with macOS in /usr/bin: put /usr/bin on PATH"
}
