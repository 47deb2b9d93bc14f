package epic

import (
	"io"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// The runner's loop is woken by a worker's events that move the schedule
// — its start, its end, a headless run's end — and not by the rest of what
// a worker writes (its progress, its agent's output), which waits for the
// loop's rest; nor by the runner's own events.
func TestWokenByScheduleEventsOnly(t *testing.T) {
	dir := t.TempDir()
	own := runs.OutputFile(dir, runs.KindSessionName(runs.KindEpic, "e", time.Now()))
	sw := &scheduleWake{own: runs.EventsFile(own)}
	session := runs.KindSessionName(runs.KindStory, "e--a", time.Now())
	out := runs.OutputFile(dir, session)
	worker, err := runs.OpenLog(out, "e--a", "", session, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	for _, c := range []struct {
		e    runs.Event
		wake bool
	}{
		{runs.Event{Event: runs.KindWorkerStart, PID: 1}, false},
		{runs.Event{Event: runs.KindStep, Step: runs.StepLoop, Message: "working"}, false},
		{runs.Event{Event: runs.KindRunOutput, Message: "thinking"}, false},
		{runs.Event{Event: runs.KindRunEnd, Cycle: 1}, true},
		{runs.Event{Event: runs.KindTaskStatus, Task: "t", To: "completed"}, false},
		{runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted}, true},
	} {
		worker.Emit(c.e, "")
		if got := sw.keep(runs.EventsFile(out)); got != c.wake {
			t.Errorf("%s: woken %v, want %v", c.e.Event, got, c.wake)
		}
	}
	// Nothing new: no wake.
	if sw.keep(runs.EventsFile(out)) {
		t.Error("a write event with nothing appended woke the runner")
	}
	ownLog, err := runs.OpenLog(own, "", "e", "s-e", io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ownLog.Close()
	ownLog.Emit(runs.Event{Event: runs.KindWorkerEnd}, "")
	if sw.keep(runs.EventsFile(own)) {
		t.Error("the runner's own events file woke it")
	}
}
