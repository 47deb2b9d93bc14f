package worker

import (
	"fmt"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// One agent per worktree, and none without its worker
// (docs/worker.md#the-agents-process): the agent runs in its own process
// group, killed when the agent exits and on every way the run ends; on
// Linux the kernel kills the agent when the worker dies (supervise.ChildGroup); and a
// worker starting finds an agent an earlier worker left alive and ends it
// before any other starts (endStrayAgents).

// strayWait bounds how long a starting worker waits for an earlier run's
// agent to die of SIGKILL.
const strayWait = 10 * time.Second

// endStrayAgents kills the agents of the story's earlier runs that are
// still alive: the process a run.start recorded, by pid and start time
// (supervise.SameProcess), with its process group. A run that recorded no start
// time (an earlier release's, or a system without one) is not judged: a
// pid alone may have been reused by another program.
func (r *run) endStrayAgents() error {
	for _, rf := range runs.Runs(r.o.SessionDir, runs.KindStory, r.o.Story) {
		if rf.Session == r.o.Session {
			continue
		}
		old := runs.ReadRun(rf.EventsFile)
		if old == nil || old.AgentPID <= 0 || old.AgentStart == 0 {
			continue
		}
		pid := old.AgentPID
		if !filesafe.ProcessAlive(pid) || !supervise.SameProcess(pid, old.AgentStart) {
			continue
		}
		// Its leader alive, the group is still the agent's.
		supervise.KillGroup(pid)
		deadline := time.Now().Add(strayWait)
		for filesafe.ProcessAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if filesafe.ProcessAlive(pid) {
			return fmt.Errorf("the agent of the earlier run %s (pid %d) still runs in the worktree and did not end on SIGKILL: end it, then run the story again",
				old.Session, pid)
		}
		r.j.Warn(runs.StepLock, "killed the agent of the earlier run %s (pid %d), which had outlived its worker: one agent works in a worktree at a time", old.Session, pid)
	}
	return nil
}
