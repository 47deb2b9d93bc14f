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
//	done      report worker.start, lock, worker.end completed (exit 0)
//	stubborn  like the default, but ignore SIGINT (SIGHUP still kills it)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

type event struct {
	Time       time.Time `json:"time"`
	Story      string    `json:"story"`
	Session    string    `json:"session"`
	Event      string    `json:"event"`
	Step       string    `json:"step,omitempty"`
	Message    string    `json:"message,omitempty"`
	Level      string    `json:"level,omitempty"`
	Cycle      int       `json:"cycle,omitempty"`
	Status     string    `json:"status,omitempty"`
	ExitCode   *int      `json:"exitCode,omitempty"`
	OutputFile string    `json:"outputFile,omitempty"`
	PID        int       `json:"pid,omitempty"`
}

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
	events, err := os.OpenFile(output+".events.jsonl", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeworker:", err)
		os.Exit(2)
	}
	emit := func(e event) {
		e.Time, e.Story, e.Session = time.Now().UTC(), story, session
		b, _ := json.Marshal(e)
		events.Write(append(b, '\n'))
		if e.Message != "" {
			fmt.Fprintf(log, "%s: %s\n", e.Event, e.Message)
		}
	}
	end := func(status string, code int) {
		emit(event{Event: "worker.end", Status: status, ExitCode: &code, Message: status})
		os.Exit(code)
	}

	emit(event{Event: "worker.start", OutputFile: output, PID: os.Getpid(), Message: "fake worker for " + story})
	if mode == "fail" {
		end("failed", 1)
	}
	root, err := store.FindRoot(".")
	if err != nil {
		emit(event{Event: "step", Step: "start", Level: "warn", Message: err.Error()})
		end("failed", 1)
	}
	lock, ok, err := store.TryLock(root, "worker-"+story)
	if err != nil || !ok {
		emit(event{Event: "step", Step: "lock", Level: "warn", Message: "another worker is running"})
		end("failed", 1)
	}
	emit(event{Event: "step", Step: "lock", Message: "holding the worker lock"})
	emit(event{Event: "step", Step: "args", Message: strings.Join(args, " ") +
		" | SAGA_SESSION=" + os.Getenv("SAGA_SESSION") + " SAGA_SESSION_DIR=" + os.Getenv("SAGA_SESSION_DIR")})
	if mode == "done" {
		lock.Unlock()
		end("completed", 0)
	}
	emit(event{Event: "run.start", Cycle: 1, Message: "run 1"})
	<-sig
	emit(event{Event: "step", Step: "end", Message: "cleaning up after a signal"})
	lock.Unlock()
	end("stopped", 1)
}
