// Package fswatch owns file watching: it is the one user of fsnotify in
// saga-lsp. It turns the system's notifications (inotify, kqueue, FSEvents
// through kqueue, ReadDirectoryChangesW) into Events, says when the system
// lost some (an Overflow event), tells a watch limit reached apart from
// other failures (IsLimit), and wakes a loop on matching changes (Wake).
// What to watch and what a change means belongs to its users: the
// workspace service (workspace) for .saga's folders, the live-run watcher
// (runs/watch) for the session dir and worktrees, the epic runner and
// follow for events files, the dashboard for a worker's output.
// docs/architecture.md#one-funnel-for-disk-changes.
package fswatch

import (
	"errors"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Op says what happened to a path; an event may carry several.
type Op uint8

const (
	Create Op = 1 << iota
	Write
	Remove
	Rename
	Chmod
	// Overflow: the system's queue of events overflowed and some were
	// lost; anything watched may have changed. Its Path is empty.
	Overflow
)

// Event is one change the system reported.
type Event struct {
	Path string
	Op   Op
}

// Has reports whether the event carries op.
func (e Event) Has(op Op) bool { return e.Op&op != 0 }

// Options configure New.
type Options struct {
	// Add, when set, stands between the watcher and every watch it adds:
	// it is called with the path and the real add (tests inject a watch
	// limit through it).
	Add func(path string, add func(string) error) error
}

// Watcher delivers the changes of the paths added to it. Add, Remove and
// Close may be called from any goroutine.
type Watcher struct {
	fsw    *fsnotify.Watcher
	add    func(string) error
	events chan Event
	errs   chan error
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

// New starts a watcher with nothing watched yet.
func New(o Options) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watcher{fsw: fsw, add: fsw.Add, events: make(chan Event, 64), errs: make(chan error, 4), done: make(chan struct{})}
	if seam := o.Add; seam != nil {
		w.add = func(p string) error { return seam(p, fsw.Add) }
	}
	w.wg.Add(1)
	go w.forward()
	return w, nil
}

// forward translates fsnotify's events; it ends when the watcher closes.
func (w *Watcher) forward() {
	defer w.wg.Done()
	defer close(w.events)
	defer close(w.errs)
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			select {
			case w.events <- Event{Path: ev.Name, Op: op(ev.Op)}:
			case <-w.done:
				return
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// An event, in order with the others and never dropped: a
				// user that keeps a copy of what it watches reads it all
				// again (workspace).
				select {
				case w.events <- Event{Op: Overflow}:
				case <-w.done:
					return
				}
				continue
			}
			select {
			case w.errs <- err:
			default: // nobody reads errors now: they are only ever logged
			}
		}
	}
}

func op(o fsnotify.Op) Op {
	var r Op
	for _, m := range []struct {
		from fsnotify.Op
		to   Op
	}{{fsnotify.Create, Create}, {fsnotify.Write, Write}, {fsnotify.Remove, Remove}, {fsnotify.Rename, Rename}, {fsnotify.Chmod, Chmod}} {
		if o.Has(m.from) {
			r |= m.to
		}
	}
	return r
}

// Add watches path (a folder: the entries in it; a file: the file).
func (w *Watcher) Add(path string) error { return w.add(path) }

// Remove stops watching path.
func (w *Watcher) Remove(path string) error { return w.fsw.Remove(path) }

// Events is the stream of changes; closed once the watcher is.
func (w *Watcher) Events() <-chan Event { return w.events }

// Errors is the system's reports of lost events and failures; closed once
// the watcher is.
func (w *Watcher) Errors() <-chan error { return w.errs }

// Close stops watching and ends both streams.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.fsw.Close()
		w.wg.Wait()
	})
	return err
}

// IsLimit: err means the system's limit of watches is reached (inotify's
// fs.inotify.max_user_watches), not that the path is wrong.
func IsLimit(err error) bool { return isLimit(err) }

// ErrUnavailable is Wake's error when the system cannot watch at all.
var ErrUnavailable = errors.New("file watching unavailable")

// Wake watches the folders dirs and returns a channel that gets a value
// (coalesced: at most one waiting) whenever a change under them passes
// keep (nil keeps all), and the function that stops it. A loop that
// re-reads its files on a wake and at a slow tick needs nothing else.
func Wake(dirs []string, keep func(Event) bool) (<-chan struct{}, func(), error) {
	w, err := New(Options{})
	if err != nil {
		return nil, func() {}, errors.Join(ErrUnavailable, err)
	}
	for _, d := range dirs {
		_ = w.Add(d) // a folder not there yet: the caller's tick covers it
	}
	wake := make(chan struct{}, 1)
	go func() {
		for ev := range w.events {
			if keep == nil || ev.Has(Overflow) || keep(ev) {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	return wake, func() { w.Close() }, nil
}
