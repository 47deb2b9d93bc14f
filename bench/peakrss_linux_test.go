package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// rssPeak is a process's peak resident set in KiB and what it was made
// of: the most anonymous memory (its own heap, stacks, runtime) seen in a
// sample, and the file pages (the binary's, shared with every process
// running it) at that sample. The parts are sampled, the peak is the
// kernel's.
type rssPeak struct{ KB, AnonKB, FileKB int64 }

// runPeakRSS runs cmd and returns its peak resident set, sampled from
// /proc/<pid>/status while it runs. Rusage's ru_maxrss cannot be used: Go
// starts children with vfork, and exec then records the parent's peak as
// the child's.
func runPeakRSS(cmd *exec.Cmd) (rssPeak, error) {
	if err := cmd.Start(); err != nil { // returns once the child has exec'd
		return rssPeak{}, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	peak := make(chan rssPeak)
	done := make(chan struct{})
	go func() {
		var p rssPeak
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			// VmHWM only grows, so the last sample before exit is the
			// peak to within a millisecond of work.
			if s := readStatus(status); s["VmHWM"] > 0 {
				p.KB = max(p.KB, s["VmHWM"])
				if s["RssAnon"] > p.AnonKB {
					p.AnonKB, p.FileKB = s["RssAnon"], s["RssFile"]
				}
			}
			select {
			case <-done:
				peak <- p
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return <-peak, err
}

// vmHWM reads the VmHWM line of a /proc status file, or 0 when the process
// is gone or exiting.
func vmHWM(status string) int64 { return readStatus(status)["VmHWM"] }

// readStatus reads the sizes (kB) of a /proc status file by name, or nothing
// when the process is gone.
func readStatus(status string) map[string]int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if v, isKB := bytes.CutSuffix(bytes.TrimSpace(rest), []byte(" kB")); ok && isKB {
			kb, _ := strconv.ParseInt(string(v), 10, 64)
			out[string(name)] = kb
		}
	}
	return out
}
