//go:build !unix || portable

package filesafe

import (
	"bytes"
	"os"
	"strconv"
)

// ProcessAlive reports whether pid is a live process: not gone, not a
// zombie (which holds no lock and writes nothing). The one test of
// liveness: lock holders, the writers of temp files and workers are all
// judged by it. Portable: os.FindProcess fails on Windows when there is no
// such process; where /proc exists (Linux built portable) it tells a gone
// process or a zombie. A process of another user counts as alive.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil // no /proc: FindProcess was the test
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}
