package verify

import (
	"context"
	"os/exec"
	"strings"
)

// seatbeltProbe is a profile that allows everything: sandbox-exec running
// it tells that Seatbelt works here (it is deprecated, not removed).
const seatbeltProbe = "(version 1)(allow default)"

// probe finds sandbox-exec and tries it: problem and fix say what stops
// confinement ("" when nothing does).
func probe(ctx context.Context) (sandboxExec, problem, fix string) {
	se, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return "", "sandbox-exec (Seatbelt) is not found", "it ships with macOS in /usr/bin: put /usr/bin on PATH"
	}
	out, err := exec.CommandContext(ctx, se, "-p", seatbeltProbe, "/bin/sh", "-c", ":").CombinedOutput()
	if err != nil {
		return "", "sandbox-exec cannot confine commands here (" + firstLine(strings.TrimSpace(string(out)), err) + ")",
			"run saga-lsp outside another sandbox (Seatbelt profiles do not nest)"
	}
	return se, "", ""
}
