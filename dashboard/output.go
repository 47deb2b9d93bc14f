package dashboard

// A running worker's output, live: its output file is watched with
// fswatch while the watcher's State says the worker runs, and each write
// becomes a Change naming the story (the story page then fetches the
// tail again). Which files are watched is brought up to date on every
// Change: no timer.

import (
	"sync"

	"github.com/saga-ai/saga-lsp/fswatch"
)

type outputWatcher struct {
	s      *Server
	fsw    *fswatch.Watcher
	mu     sync.Mutex
	files  map[string]outputOf // watched path → whose
	closed bool
	done   chan struct{}
}

type outputOf struct{ root, story string }

func newOutputWatcher(s *Server) *outputWatcher {
	o := &outputWatcher{s: s, files: map[string]outputOf{}, done: make(chan struct{})}
	fsw, err := fswatch.New(fswatch.Options{})
	if err != nil {
		s.log.Warn("dashboard: no live output (file watching unavailable)", "err", err)
		return o
	}
	o.fsw = fsw
	go o.run()
	return o
}

// update watches the output files of the workers running now, and no
// others.
func (o *outputWatcher) update() {
	if o.fsw == nil {
		return
	}
	want := map[string]outputOf{}
	for _, r := range o.s.repos {
		if r.src.Watcher == nil {
			continue
		}
		for id, ss := range r.src.Watcher.State().Stories {
			if ss.Running && ss.Run != nil && ss.Run.OutputFile != "" {
				want[ss.Run.OutputFile] = outputOf{root: r.src.Root, story: id}
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for p := range o.files {
		if _, ok := want[p]; !ok {
			o.fsw.Remove(p)
			delete(o.files, p)
		}
	}
	for p, of := range want {
		if _, ok := o.files[p]; ok {
			continue
		}
		if err := o.fsw.Add(p); err == nil { // not there yet: the next Change tries again
			o.files[p] = of
		}
	}
}

func (o *outputWatcher) run() {
	for {
		select {
		case <-o.done:
			return
		case ev, ok := <-o.fsw.Events():
			if !ok {
				return
			}
			if !ev.Has(fswatch.Write) {
				continue
			}
			o.mu.Lock()
			of, watched := o.files[ev.Path]
			o.mu.Unlock()
			if watched {
				o.s.hub.notify(Change{Root: of.root, Output: []string{of.story}})
			}
		case _, ok := <-o.fsw.Errors():
			if !ok {
				return
			}
		}
	}
}

func (o *outputWatcher) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	close(o.done)
	if o.fsw != nil {
		o.fsw.Close()
	}
}
