package verify

import (
	"fmt"
	"math"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// On macOS a check's limits are the shell's ulimits, set by the check's
// first shell before it runs the command (limitsScript): macOS cannot set
// another process's rlimits (no prlimit), and has no /proc for a watchdog,
// so the whole-check memory and process limits are not enforced
// (docs/security.md#checks-on-macos).

// setLimits: set by limitsScript in the check's own shell.
func setLimits(int, store.CheckLimits, time.Duration) error { return nil }

// limitsScript sets the per-process limits in the check's first shell:
// data (KiB), file size (512-byte blocks, POSIX sh), CPU seconds (the
// timeout, and one more), no core files.
func limitsScript(l store.CheckLimits, timeout time.Duration) string {
	cpu := uint64(math.Ceil(timeout.Seconds()))
	return fmt.Sprintf("ulimit -d %d && ulimit -f %d && ulimit -t %d && ulimit -c 0 || exit 125; ",
		l.Memory>>10, l.FileSize>>9, cpu)
}

// watchdog: none here (no /proc); the per-process limits stand alone.
type watchdog struct{}

func newWatchdog(int, store.CheckLimits) *watchdog   { return &watchdog{} }
func (*watchdog) run(<-chan struct{}, chan<- string) {}
