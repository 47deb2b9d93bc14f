//go:build !linux || portable

package supervise

// procStartKnown says that ProcStart works on this system: not here, so a
// recorded pid is checked by its command line only (LooksLike).
const procStartKnown = false

// ProcStart is when pid started, where the system tells (Linux: proc_linux.go).
func ProcStart(pid int) (start uint64, ok bool) { return 0, false }
