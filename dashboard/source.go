package dashboard

import (
	"slices"

	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// Source is one repository as a face holds it: the workspace now and the
// live-run watcher following its workers. The dashboard never changes
// either; it reads them per request.
type Source struct {
	Root      string                  // the workspace root (holds .saga/)
	Workspace func() *store.Workspace // the workspace now (immutable)
	Watcher   *watch.Watcher          // its live runs; nil shows no runs
	// Setup, when set, is the root's run configuration as the face that
	// hands the source resolved it (the language server's); nil: the
	// dashboard resolves its own, once (runs/github.NewSetup).
	Setup *control.Setup
	// Bind, when set, is called once with the function the source calls
	// when something changed (Local's; the language server calls
	// Server.Notify itself).
	Bind func(notify func(Change))
}

// Change says what changed in a repository, for the open pages to fetch
// themselves again. The zero lists with All false mean nothing.
type Change struct {
	Root    string
	Stories []string // stories whose files or runs changed
	Epics   []string // epics whose files or runs changed
	Output  []string // stories whose running worker's output grew
	All     bool     // anything may have changed (a page of everything fetches itself again)
}

// ChangeFromFiles is the Change of files changed at rels (root-relative,
// slash-separated): the stories and epics they belong to.
func ChangeFromFiles(root string, rels []string) Change {
	c := Change{Root: root}
	for _, rel := range rels {
		kind, owner, _ := store.Classify(rel)
		switch kind {
		case store.KindStory, store.KindTask, store.KindJournal:
			c.Stories = append(c.Stories, owner)
		case store.KindEpic:
			c.Epics = append(c.Epics, owner)
		default:
			c.All = true
		}
	}
	return c
}

// ChangeSink adapts a watcher's Sink calls to Change notices: a face that
// owns the watcher's Sink (the language server's) forwards its calls here;
// Local uses it as the Sink itself.
type ChangeSink struct {
	Root   string
	Notify func(Change)
}

var _ watch.Sink = ChangeSink{}

func (s ChangeSink) send(c Change) {
	if s.Notify != nil {
		c.Root = s.Root
		s.Notify(c)
	}
}

// WorkerProgress: the story's run moved.
func (s ChangeSink) WorkerProgress(p watch.WorkerProgress) {
	s.send(Change{Stories: []string{p.Story}})
}

// TaskStatus: a task's status moved in its story's live view.
func (s ChangeSink) TaskStatus(t watch.TaskStatus) { s.send(Change{Stories: []string{t.Story}}) }

// EpicProgress: an epic run moved.
func (s ChangeSink) EpicProgress(p watch.EpicProgress) {
	c := Change{Epics: []string{p.Epic}}
	for _, st := range p.Stories {
		c.Stories = append(c.Stories, st.ID)
	}
	s.send(c)
}

// FilesChanged: the run-dependent state of these files changed.
func (s ChangeSink) FilesChanged(rels []string) { s.send(ChangeFromFiles(s.Root, rels)) }

// Refresh: what views of runs show may have changed.
func (s ChangeSink) Refresh() { s.send(Change{All: true}) }

// merge adds c's lists to m (same root).
func (m *Change) merge(c Change) {
	m.Stories = append(m.Stories, c.Stories...)
	m.Epics = append(m.Epics, c.Epics...)
	m.Output = append(m.Output, c.Output...)
	m.All = m.All || c.All
}

func (m *Change) compact() {
	for _, l := range []*[]string{&m.Stories, &m.Epics, &m.Output} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
		if *l == nil {
			*l = []string{}
		}
	}
}
