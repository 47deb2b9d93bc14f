package runs

import "syscall"

// ChildGroup starts a supervised process in its own process group. There
// is no parent-death signal here: an agent whose worker was killed is
// ended by the next worker of its story, and only where its start time was
// recorded (Linux).
func ChildGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// AwaitExit cannot wait without reaping here: callers kill the group after
// cmd.Wait instead.
func AwaitExit(pid int) bool { return false }
