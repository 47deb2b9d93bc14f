// Command fakeworker stands in for `saga-lsp worker` in the run/stop tests:
// it is started as `<bin> worker <story> --output-file F --session S …`,
// takes the worker lock like the real worker, writes the same events, and
// on SIGINT/SIGTERM "cleans up" and exits 1 with worker.end status stopped.
//
// FAKE_WORKER_MODE changes what it does:
//
//	(empty)   run until SIGINT/SIGTERM
//	crash     print "fake worker: boom" and exit 3 without any event
//	fail      report worker.start, then worker.end failed (exit 1)
//	done      report worker.start, then worker.end completed (exit 0): a
//	          worker that ends before run sees it report its lock (a lock
//	          event first would let run see it running, by timing)
//	stubborn  like the default, but ignore SIGINT (SIGHUP still kills it)
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

func main() {
	args := os.Args[1:]
	if len(args) < 2 || args[0] != "worker" {
		fmt.Fprintln(os.Stderr, "fakeworker: usage: fakeworker worker <story> --output-file F --session S")
		os.Exit(2)
	}
	story, output, session := args[1], "", ""
	for i := 2; i+1 < len(args); i++ {
		switch args[i] {
		case "--output-file":
			output = args[i+1]
		case "--session":
			session = args[i+1]
		}
	}
	mode := os.Getenv("FAKE_WORKER_MODE")
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGINT)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	if mode != "stubborn" {
		signal.Notify(sig, syscall.SIGINT)
	}

	log, err := os.OpenFile(output, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeworker:", err)
		os.Exit(2)
	}
	if mode == "crash" {
		fmt.Fprintln(log, "fake worker: boom")
		os.Exit(3)
	}
	events, err := runs.OpenWriter(runs.EventsFile(output), story, "", session, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeworker:", err)
		os.Exit(2)
	}
	emit := func(e runs.Event) {
		events.Emit(e)
		if e.Message != "" {
			fmt.Fprintf(log, "%s: %s\n", e.Event, e.Message)
		}
	}
	end := func(status string, code int) {
		emit(runs.Event{Event: runs.KindWorkerEnd, Status: status, ExitCode: &code, Message: status})
		os.Exit(code)
	}

	emit(runs.Event{Event: runs.KindWorkerStart, OutputFile: output, PID: os.Getpid(), ProcStart: supervise.SelfStart(), Message: "fake worker for " + story})
	if mode == "fail" {
		end("failed", 1)
	}
	root, err := store.FindRoot(".")
	if err != nil {
		emit(runs.Event{Event: runs.KindStep, Step: runs.StepStart, Level: runs.LevelWarn, Message: err.Error()})
		end("failed", 1)
	}
	lock, ok, err := filesafe.TryLock(root, runs.WorkerLockName(story))
	if err != nil || !ok {
		emit(runs.Event{Event: runs.KindStep, Step: runs.StepLock, Level: runs.LevelWarn, Message: "another worker is running"})
		end("failed", 1)
	}
	if mode == "done" {
		lock.Unlock()
		end("completed", 0)
	}
	emit(runs.Event{Event: runs.KindStep, Step: runs.StepLock, Message: "holding the worker lock"})
	emit(runs.Event{Event: runs.KindStep, Step: "args", Message: strings.Join(args, " ") +
		" | SAGA_SESSION=" + os.Getenv(runs.EnvSession) + " SAGA_SESSION_DIR=" + os.Getenv(runs.EnvSessionDir)})
	emit(runs.Event{Event: runs.KindRunStart, Cycle: 1, Message: "run 1"})
	<-sig
	emit(runs.Event{Event: runs.KindStep, Step: runs.StepEnd, Message: "cleaning up after a signal"})
	lock.Unlock()
	end("stopped", 1)
}
