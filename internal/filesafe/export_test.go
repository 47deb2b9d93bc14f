//go:build unix

package filesafe

import (
	"os/exec"
	"testing"
)

// LoadTaskCount loads the workspace at root with store's loader and counts
// story's tasks (-1: no such story), failing t when a temp file of an
// atomic write got a diagnostic. Set by load_test.go: store imports this
// package, so only an external test may load.
var LoadTaskCount func(t *testing.T, root, story string) int

// StartHelperLine is startHelperLine for the external tests.
func StartHelperLine(t *testing.T, cmd *exec.Cmd) string { return startHelperLine(t, cmd) }
