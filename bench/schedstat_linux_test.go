package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// schedTimes is a process's time on a core and its time runnable but
// waiting for one, summed over its threads (/proc/<pid>/task/*/schedstat:
// nanoseconds, where getrusage counts in clock ticks). A face's latency
// under a loaded machine is the one plus the other: the second says how
// much of it is the load's.
func schedTimes(pid int) (onCPU, waiting time.Duration, err error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, 0, fmt.Errorf("schedstat of pid %d: %v (no /proc?)", pid, err)
	}
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a thread gone meanwhile
		}
		fields := strings.Fields(string(data))
		if len(fields) < 2 {
			return 0, 0, fmt.Errorf("%s: %q, want run and wait times", f, data)
		}
		run, err1 := strconv.ParseInt(fields[0], 10, 64)
		wait, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("%s: %q, want run and wait times", f, data)
		}
		onCPU += time.Duration(run)
		waiting += time.Duration(wait)
	}
	return onCPU, waiting, nil
}

// machineBusy is the time every core of the machine has spent on other
// than idling and waiting for I/O since boot (/proc/stat, in clock ticks
// of 10 ms): over a run, the share its parts took of what was there.
func machineBusy() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("machine CPU: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat's first line %q, want the cpu totals", line)
	}
	var busy int64
	for i, f := range fields[1:] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat's first line %q: %w", line, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond, nil
}
