package verify

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// Windows has no sandbox saga-lsp confines checks with, nor the POSIX
// shell they are written for: checks are refused here (probe) and run in
// WSL, where the Linux build confines them (docs/platforms.md#windows).

func probe(context.Context) (string, string, string) {
	return "", "checks cannot be confined on Windows (no bubblewrap, no Seatbelt, no POSIX shell)",
		"run saga-lsp in WSL, where the Linux build confines them with bubblewrap"
}

// viewsMounted: no check runs here (probe refuses them).
const viewsMounted = false

func (r *Runner) confined(string, []string, *os.File, *os.File, store.CheckLimits, time.Duration, *mounted) (*exec.Cmd, *os.File, *os.File, error) {
	return nil, nil, nil, errors.New("checks cannot be confined on Windows: run saga-lsp in WSL")
}

func setLimits(int, store.CheckLimits, time.Duration) error { return nil }

func limitsScript(store.CheckLimits, time.Duration) string { return "" }

func limitExit(int, store.CheckLimits, time.Duration) string { return "" }

type watchdog struct{}

func newWatchdog(int, store.CheckLimits) *watchdog   { return &watchdog{} }
func (*watchdog) run(<-chan struct{}, chan<- string) {}
