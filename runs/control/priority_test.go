//go:build unix

package control_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/saga-ai/saga-lsp/runs/worker"
)

// assertBackground: the agent of a worker `run` started in tmux ran at the
// worker's priority (worker.Nice, or lower where the test itself runs
// lower), and on Linux in a session of its own whose CPU share is lowered
// too — not the session of whoever started the run
// (docs/worker.md#priority). claudeLog is the stand-in claude's log.
func assertBackground(t *testing.T, claudeLog string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return // the stand-in tells its priority where /proc does
	}
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := max(worker.Nice, 20-prio) // the system call answers 20 - nice
	own, _ := os.ReadFile("/proc/self/autogroup")
	ownGroup, _, _ := strings.Cut(string(own), " ")
	f, err := os.Open(claudeLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := 0
	for sc := bufio.NewScanner(f); sc.Scan(); runs++ {
		var inv struct {
			Nice      *int
			Autogroup string
		}
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatalf("%s: %v", claudeLog, err)
		}
		if inv.Nice == nil {
			t.Errorf("the stand-in claude did not say its nice value: %s", sc.Bytes())
		} else if *inv.Nice != want {
			t.Errorf("claude ran at nice %d, want %d", *inv.Nice, want)
		}
		group, niceText, _ := strings.Cut(inv.Autogroup, " ")
		if len(own) > 0 && (group == ownGroup || niceText != "nice "+strconv.Itoa(worker.Nice)) {
			t.Errorf("claude ran in autogroup %q, want one of its own (the test's is %q) at nice %d", inv.Autogroup, strings.TrimSpace(string(own)), worker.Nice)
		}
	}
	if runs == 0 {
		t.Fatalf("%s: claude never ran", claudeLog)
	}
}

// assertStartedInForeground: the worker's set-up up to its lock — here
// its check of claude's release — ran at the priority of what started it,
// in a session not lowered: the start a user or the runner waits for
// (docs/worker.md#priority). Where the test itself runs at Nice or lower
// priority, the two cannot be told apart.
func assertStartedInForeground(t *testing.T, versionLog string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	own := 20 - prio
	data, err := os.ReadFile(versionLog)
	if err != nil || len(data) == 0 {
		t.Fatalf("the worker's check of claude's release was not logged: %v", err)
	}
	// The run's preflight checks it too; the worker's is the last.
	for line := range bytes.Lines(bytes.TrimSpace(data)) {
		var inv struct {
			Nice      *int
			Autogroup string
		}
		if err := json.Unmarshal(line, &inv); err != nil {
			t.Fatalf("%s: %v", versionLog, err)
		}
		if inv.Nice == nil {
			t.Errorf("the stand-in claude did not say its nice value: %s", line)
		} else if *inv.Nice != own {
			t.Errorf("the worker's set-up ran at nice %d, want its starter's %d", *inv.Nice, own)
		}
		if own < worker.Nice && strings.HasSuffix(inv.Autogroup, " nice "+strconv.Itoa(worker.Nice)) {
			t.Errorf("the worker's set-up ran in a lowered session: %q", inv.Autogroup)
		}
	}
}
