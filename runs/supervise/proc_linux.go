//go:build linux && !portable

package supervise

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// procStartKnown says that ProcStart works on this system.
const procStartKnown = true

// ProcStart is when pid started, in clock ticks after boot (field 22 of
// /proc/<pid>/stat): with the pid it names one process for good, where a
// pid alone may have been reused. ok is false when pid is gone.
func ProcStart(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields after the last ')' start with field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, false
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	return start, err == nil
}
