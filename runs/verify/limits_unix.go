//go:build unix

package verify

import (
	"fmt"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"golang.org/x/sys/unix"
)

// limitExit explains an exit status that a limit's signal causes (the
// shell reports a child killed by signal N as 128+N), or "".
func limitExit(code int, l store.CheckLimits, timeout time.Duration) string {
	switch code {
	case 128 + int(unix.SIGXFSZ):
		return fmt.Sprintf("exit status %d: a file it wrote reached the file-size limit, %s (SIGXFSZ; checkLimits.fileSize)", code, store.FormatSize(l.FileSize))
	case 128 + int(unix.SIGXCPU):
		return fmt.Sprintf("exit status %d: a process reached its CPU-time limit, the check's timeout of %s (SIGXCPU)", code, timeout)
	}
	return ""
}
