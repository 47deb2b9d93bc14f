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

// runPeakRSS runs cmd and returns its peak resident set in KiB, sampled from
// /proc/<pid>/status while it runs. Rusage's ru_maxrss cannot be used: Go
// starts children with vfork, and exec then records the parent's peak as
// the child's.
func runPeakRSS(cmd *exec.Cmd) (kb int64, err error) {
	if err := cmd.Start(); err != nil { // returns once the child has exec'd
		return 0, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	peak := make(chan int64)
	done := make(chan struct{})
	go func() {
		var peakKB int64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			// VmHWM only grows, so the last sample before exit is the
			// peak to within a millisecond of work.
			peakKB = max(peakKB, vmHWM(status))
			select {
			case <-done:
				peak <- peakKB
				return
			case <-tick.C:
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	return <-peak, err
}

// vmHWM reads the VmHWM line of a /proc status file, or 0 when the process
// is gone or exiting.
func vmHWM(status string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb
		}
	}
	return 0
}
