//go:build unix

package runs

import "syscall"

// KillGroup ends the process group pgid and everything in it (see
// AwaitExit for when that is safe).
func KillGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
