//go:build unix && !portable

package filesafe

import (
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ProcessAlive reports whether pid is a live process: not gone, not a
// zombie (which holds no lock and writes nothing). A process of another
// user counts as alive. The one test of liveness: lock holders, the writers
// of temp files and workers are all judged by it.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}
