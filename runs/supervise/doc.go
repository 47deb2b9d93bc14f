// Package supervise owns process supervision for the programs that run
// stories: who a recorded process is (ProcStart, SameProcess, SelfStart,
// LooksLike: pid, start time, command line), how a supervised child is
// started and ended with its process group (ChildGroup, OwnGroup,
// Supervised, AwaitExit, KillGroup, Interrupt), its exit status and the
// signals that ask a saga-lsp process to stop (ExitStatus, TerminateSignal,
// StopSignals), and a process's CPU priority (Background) — per system:
// group_*.go, priority_*.go, proc_linux.go and proc_portable.go
// (docs/platforms.md#where-os-specific-code-lives). It knows nothing of
// runs: the run protocol (package runs) names the processes it supervises.
// It imports nothing of this module.
package supervise
