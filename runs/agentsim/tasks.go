package agentsim

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Task statuses as stored on disk.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
)

// task is one stored task, in Claude Code's schema (docs/claude-code.md#task-storage).
// Optional fields are pointers / nil when absent.
type task struct {
	ID          string
	Subject     string
	Description string
	ActiveForm  *string
	Status      string
	Owner       *string
	Blocks      []string
	BlockedBy   []string
	Metadata    *obj
}

// toObj gives the task with the exact key order Claude Code writes.
func (t *task) toObj() *obj {
	o := newObj("id", t.ID, "subject", t.Subject, "description", t.Description)
	if t.ActiveForm != nil {
		o.set("activeForm", *t.ActiveForm)
	}
	o.set("status", t.Status)
	if t.Owner != nil {
		o.set("owner", *t.Owner)
	}
	o.set("blocks", nonNil(t.Blocks))
	o.set("blockedBy", nonNil(t.BlockedBy))
	if t.Metadata != nil {
		o.set("metadata", t.Metadata)
	}
	return o
}

// encode is the file content: 2-space indented JSON, no trailing newline.
func (t *task) encode() []byte { return []byte(stringify(t.toObj(), "  ")) }

// hidden reports a truthy metadata._internal (hidden from TaskList).
func (t *task) hidden() bool {
	v, ok := t.Metadata.get("_internal")
	return ok && truthy(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// parseTask validates a stored task like Claude Code's schema does: the
// required fields with the right types, optional ones with the right type
// when present (null is not accepted), unknown top-level keys dropped.
func parseTask(data []byte) (*task, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*obj)
	if !ok {
		return nil, errors.New("not an object")
	}
	t := &task{}
	reqStr := func(k string, dst *string) error {
		v, ok := o.get(k)
		s, isStr := v.(string)
		if !ok || !isStr {
			return fmt.Errorf("%s: expected string", k)
		}
		*dst = s
		return nil
	}
	optStr := func(k string) (*string, error) {
		v, ok := o.get(k)
		if !ok {
			return nil, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return nil, fmt.Errorf("%s: expected string", k)
		}
		return &s, nil
	}
	strs := func(k string) ([]string, error) {
		v, ok := o.get(k)
		a, isArr := v.([]any)
		if !ok || !isArr {
			return nil, fmt.Errorf("%s: expected array", k)
		}
		out := make([]string, 0, len(a))
		for _, e := range a {
			s, isStr := e.(string)
			if !isStr {
				return nil, fmt.Errorf("%s: expected array of strings", k)
			}
			out = append(out, s)
		}
		return out, nil
	}
	if err := reqStr("id", &t.ID); err != nil {
		return nil, err
	}
	if err := reqStr("subject", &t.Subject); err != nil {
		return nil, err
	}
	if err := reqStr("description", &t.Description); err != nil {
		return nil, err
	}
	if t.ActiveForm, err = optStr("activeForm"); err != nil {
		return nil, err
	}
	if err := reqStr("status", &t.Status); err != nil {
		return nil, err
	}
	switch t.Status {
	case statusPending, statusInProgress, statusCompleted:
	default:
		return nil, fmt.Errorf("status: invalid value %q", t.Status)
	}
	if t.Owner, err = optStr("owner"); err != nil {
		return nil, err
	}
	if t.Blocks, err = strs("blocks"); err != nil {
		return nil, err
	}
	if t.BlockedBy, err = strs("blockedBy"); err != nil {
		return nil, err
	}
	if v, ok := o.get("metadata"); ok {
		m, isObj := v.(*obj)
		if !isObj {
			return nil, errors.New("metadata: expected object")
		}
		t.Metadata = m
	}
	return t, nil
}

// sanitizeID maps every character outside [a-zA-Z0-9_-] to '-', as Claude
// Code does for list and task IDs in paths.
func sanitizeID(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			out = append(out, byte(r))
		} else {
			out = append(out, '-')
		}
	}
	return string(out)
}

// taskStore is one task list directory.
type taskStore struct {
	dir string
	// lockBusy, when set, is told each time a lock is found held and
	// waited for: a test releases its lock on that event, not on a timer.
	lockBusy func()
}

func (s *taskStore) path(id string) string {
	return filepath.Join(s.dir, sanitizeID(id)+".json")
}

// errTaskNotFound is what a missing or invalid task file gives.
var errTaskNotFound = errors.New("Task not found")

// read returns the task stored under id, or errTaskNotFound when the file is
// missing, does not validate, or names another id.
func (s *taskStore) read(id string) (*task, error) {
	p := s.path(id)
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errTaskNotFound
		}
		return nil, err
	}
	t, err := parseTask(data)
	if err != nil || t.ID != strings.TrimSuffix(filepath.Base(p), ".json") {
		return nil, errTaskNotFound
	}
	return t, nil
}

// list reads every valid task of the list (files named *.json whose id
// matches the name), in listing order (see sortTasks).
func (s *taskStore) list() ([]*task, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*task
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			continue
		}
		t, err := parseTask(data)
		if err != nil || t.ID != strings.TrimSuffix(name, ".json") {
			continue
		}
		out = append(out, t)
	}
	sortTasks(out)
	return out, nil
}

// sortTasks orders tasks as the simulated TaskList shows them: numeric IDs
// in numeric order first, then the others by string order.
func sortTasks(ts []*task) {
	sort.SliceStable(ts, func(i, j int) bool { return idLess(ts[i].ID, ts[j].ID) })
}

func idLess(a, b string) bool {
	na, ea := numericID(a)
	nb, eb := numericID(b)
	switch {
	case ea && eb:
		if na != nb {
			return na < nb
		}
		return a < b
	case ea != eb:
		return ea
	}
	return a < b
}

// numericID reports whether id is all decimal digits, and its value.
func numericID(id string) (uint64, bool) {
	if id == "" {
		return 0, false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(id, 10, 64)
	return n, err == nil
}

// writeAtomic writes data to path through "<path>.tmp.<8 hex>" and a rename.
func writeAtomic(path string, data []byte) error {
	var rb [4]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return err
	}
	tmp := path + ".tmp." + hex.EncodeToString(rb[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// update reads, changes and writes one task under its per-task lock
// ("<id>.json.lock/"). fn says whether to write the changed task back or to
// delete the file; an error from fn leaves the file alone.
func (s *taskStore) update(id string, fn func(t *task) (write bool, del bool, err error)) (*task, error) {
	p := s.path(id)
	release, err := s.acquireLock(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errTaskNotFound
		}
		return nil, err
	}
	defer release()
	t, err := s.read(id)
	if err != nil {
		return nil, err
	}
	write, del, err := fn(t)
	if err != nil {
		return t, err
	}
	if del {
		if err := os.Remove(p); err != nil {
			return t, err
		}
		return t, nil
	}
	if write {
		if err := writeAtomic(p, t.encode()); err != nil {
			return t, err
		}
	}
	return t, nil
}

// withListLock runs fn holding the list lock ("<dir>/.lock.lock/"; the empty
// file "<dir>/.lock" is created once and kept).
func (s *taskStore) withListLock(fn func() error) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	lf := filepath.Join(s.dir, ".lock")
	f, err := os.OpenFile(lf, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	release, err := s.acquireLock(lf)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

func (s *taskStore) highWatermark() uint64 {
	data, err := os.ReadFile(filepath.Join(s.dir, ".highwatermark"))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// nextID is max(highest numeric *.json name, .highwatermark) + 1. Call it
// under the list lock.
func (s *taskStore) nextID() (string, error) {
	max := s.highWatermark()
	ents, err := os.ReadDir(s.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		if n, ok := numericID(strings.TrimSuffix(name, ".json")); ok && n > max {
			max = n
		}
	}
	return strconv.FormatUint(max+1, 10), nil
}

// create numbers and writes a new pending task under the list lock. It does
// not raise the high-water mark.
func (s *taskStore) create(t *task) error {
	return s.withListLock(func() error {
		id, err := s.nextID()
		if err != nil {
			return err
		}
		t.ID = id
		t.Status = statusPending
		t.Blocks = nonNil(t.Blocks)
		t.BlockedBy = nonNil(t.BlockedBy)
		return writeAtomic(s.path(id), t.encode())
	})
}

// raiseWatermark records a deleted numeric ID in .highwatermark.
func (s *taskStore) raiseWatermark(id string) error {
	n, ok := numericID(id)
	if !ok {
		return nil
	}
	return s.withListLock(func() error {
		if n <= s.highWatermark() {
			return nil
		}
		return writeAtomic(filepath.Join(s.dir, ".highwatermark"), []byte(strconv.FormatUint(n, 10)))
	})
}

// Lock timing, as in the facts: stale after 10 s, refreshed every 5 s, about
// 30 retries with 5–100 ms backoff.
const (
	lockStale   = 10 * time.Second
	lockRefresh = 5 * time.Second
	lockRetries = 30
)

// acquireLock takes the mkdir lock "<path>.lock/". path must exist (the
// lock library resolves it first); otherwise the error wraps fs.ErrNotExist.
func (s *taskStore) acquireLock(path string) (func(), error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	dir := path + ".lock"
	wait := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if st, serr := os.Stat(dir); serr == nil && time.Since(st.ModTime()) > lockStale {
			os.Remove(dir) // stale: take it over
			continue
		}
		if attempt >= lockRetries {
			return nil, errors.New("Lock file is already being held")
		}
		if s.lockBusy != nil {
			s.lockBusy()
		}
		time.Sleep(wait)
		if wait *= 2; wait > 100*time.Millisecond {
			wait = 100 * time.Millisecond
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(lockRefresh)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				now := time.Now()
				os.Chtimes(dir, now, now)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		os.Remove(dir)
	}, nil
}
