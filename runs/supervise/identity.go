package supervise

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// LooksLike checks, where /proc exists, that pid runs saga-lsp's
// subcommand for id: a pid read from an old events file may have been
// reused by another program.
func LooksLike(pid int, subcommand, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, statErr := os.Stat("/proc/self/cmdline")
		return statErr != nil // no /proc: cannot tell
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return slices.Contains(args, id) && (slices.Contains(args, subcommand) || slices.Contains(args, "--"+subcommand))
}

// SameProcess tells whether pid is still the process whose start
// (ProcStart's) was recorded with it. Without a recorded start (an earlier
// version's events) or where the system cannot tell, only the pid is
// known: true.
func SameProcess(pid int, start uint64) bool {
	if start == 0 || !procStartKnown {
		return true
	}
	now, ok := ProcStart(pid)
	return ok && now == start
}

// SelfStart is the running process's ProcStart (0 where unknown), for the
// events that record who a worker or runner is.
func SelfStart() uint64 {
	start, _ := ProcStart(os.Getpid())
	return start
}

// StopSignals are the signals that ask a saga-lsp process to stop: ^C and
// TerminateSignal.
func StopSignals() []os.Signal { return []os.Signal{os.Interrupt, TerminateSignal()} }
