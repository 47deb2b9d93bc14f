package verify

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"golang.org/x/sys/unix"
)

// A check's limits (store.CheckLimits; docs/format.md#checks). Cgroups are
// not something an unprivileged user can count on (no delegated cgroup v2
// tree in containers, CI or ssh sessions), so the limits are built from
// what always works:
//
//   - per process, rlimits set on the check's first process before it runs
//     (bubblewrap waits at --block-fd until they are set) and inherited by
//     all it starts: RLIMIT_DATA = the memory limit (private writable
//     mappings: malloc, mmap, Go's heap, V8's — unlike RLIMIT_AS, which
//     node's address-space reservations break), RLIMIT_FSIZE = the file-size
//     limit, RLIMIT_CPU = the timeout (SIGXCPU, then SIGKILL a second
//     later), no core files. Without CAP_SYS_RESOURCE in the initial user
//     namespace a check cannot raise them.
//   - for the whole check, a watchdog that reads the check's own /proc (its
//     pid namespace, seen through its first process's root) every
//     watchInterval: the processes it runs, and the memory they hold
//     (RssAnon + RssShmem of each) plus what its private tmpfs (/tmp,
//     /var/tmp, /dev/shm) holds; past a limit it kills the check. RLIMIT_NPROC
//     does not serve: it counts threads, and root is exempt from it.
//
// An unconfined check (no pid namespace) gets the rlimits only.

// watchInterval is how often the watchdog counts a confined check's
// processes and memory: a check may overshoot a limit for that long.
const watchInterval = 100 * time.Millisecond

// setLimits sets the rlimits of the process pid (the check's first,
// waiting at its gate), never above what the process already had.
func setLimits(pid int, l store.CheckLimits, timeout time.Duration) error {
	cpu := uint64(math.Ceil(timeout.Seconds()))
	for _, x := range []struct {
		name     string
		res      int
		cur, max uint64
	}{
		{"memory (RLIMIT_DATA)", unix.RLIMIT_DATA, uint64(l.Memory), uint64(l.Memory)},
		{"file size (RLIMIT_FSIZE)", unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize)},
		{"CPU time (RLIMIT_CPU)", unix.RLIMIT_CPU, cpu, cpu + 1},
		{"core files (RLIMIT_CORE)", unix.RLIMIT_CORE, 0, 0},
	} {
		var old unix.Rlimit
		if err := unix.Prlimit(pid, x.res, nil, &old); err != nil {
			return fmt.Errorf("read the %s limit: %w", x.name, err)
		}
		lim := unix.Rlimit{Cur: min(x.cur, old.Max), Max: min(x.max, old.Max)}
		if err := unix.Prlimit(pid, x.res, &lim, nil); err != nil {
			return fmt.Errorf("set the %s limit: %w", x.name, err)
		}
	}
	return nil
}

// watchdog counts a confined check's processes and memory.
type watchdog struct {
	root   string // /proc/<pid>/root of the check's first process
	pidfd  int    // that process, to tell a reading of it from one of a reused pid (-1: none)
	limits store.CheckLimits
	// hostProc is the device of this process's /proc: until bubblewrap
	// has mounted the check's own, the check's /proc is still the host's
	// (bubblewrap reports the process before it sets up its mounts).
	hostProc uint64
}

// newWatchdog watches the check whose first process is pid (in the host's
// pid namespace), alive at its gate.
func newWatchdog(pid int, l store.CheckLimits) *watchdog {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1
	}
	var st unix.Stat_t
	unix.Stat("/proc", &st)
	return &watchdog{root: filepath.Join("/proc", strconv.Itoa(pid), "root"), pidfd: fd, limits: l, hostProc: st.Dev}
}

// run samples until done is closed or a limit is passed, when it sends why
// on fired and stops.
func (w *watchdog) run(done <-chan struct{}, fired chan<- string) {
	defer func() {
		if w.pidfd >= 0 {
			unix.Close(w.pidfd)
		}
	}()
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		why, ok := w.sample()
		if !ok {
			return // the check has ended
		}
		if why != "" && w.alive() {
			fired <- why
			return
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// alive tells whether the check's first process still runs, so that a
// sample was of its namespace.
func (w *watchdog) alive() bool {
	return w.pidfd < 0 || unix.PidfdSendSignal(w.pidfd, 0, nil, 0) == nil
}

// sample reads the check's processes and memory once: why is the limit
// passed ("" when none); ok is false once the check's /proc is gone.
func (w *watchdog) sample() (why string, ok bool) {
	proc := filepath.Join(w.root, "proc")
	var st unix.Stat_t
	if err := unix.Stat(proc, &st); err != nil {
		// Its root may be unreadable for a moment while bubblewrap sets
		// it up; only a check that has ended is no longer watched.
		return "", w.alive()
	}
	if st.Dev == w.hostProc {
		return "", true // not set up yet
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return "", w.alive()
	}
	var pids []string
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 1 { // 1 is bubblewrap's init
			pids = append(pids, e.Name())
		}
	}
	if len(pids) > w.limits.Processes {
		return fmt.Sprintf("killed: it ran more than %d processes at once (checkLimits.processes)", w.limits.Processes), true
	}
	var mem int64
	for _, p := range pids {
		mem += rssPrivate(filepath.Join(proc, p, "status"))
	}
	for _, d := range []string{"tmp", "var/tmp", "dev/shm"} {
		var st unix.Statfs_t
		if unix.Statfs(filepath.Join(w.root, d), &st) == nil && st.Type == unix.TMPFS_MAGIC {
			mem += int64(st.Blocks-st.Bfree) * st.Bsize
		}
	}
	if mem > w.limits.Memory {
		return fmt.Sprintf("killed: its processes and its /tmp held more than %s of memory (checkLimits.memory)", store.FormatSize(w.limits.Memory)), true
	}
	return "", true
}

// rssPrivate is the memory a process holds that no file backs (RssAnon +
// RssShmem of its status file), in bytes; 0 when it is gone.
func rssPrivate(status string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	var n int64
	for _, key := range [][]byte{[]byte("RssAnon:"), []byte("RssShmem:")} {
		i := bytes.Index(data, key)
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+len(key):])
		if len(f) > 0 {
			kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
			n += kb << 10
		}
	}
	return n
}

// limitsScript: nothing for the check's shell to set; setLimits sets them
// on its first process at the gate.
func limitsScript(store.CheckLimits, time.Duration) string { return "" }
