package dashboard

// What the pages show, derived per request from one workspace snapshot and
// one published watch.State (two atomic loads): story and epic states,
// progress, spend, who needs the user. Nothing here reads a file or runs a
// program but the read model of a story (readmodel.Evidence, once per view:
// model); the pages that need more (an epic's derived run state, a
// story's runs, journal and output) ask for it themselves.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// State is a state as the pages show it: never by colour alone — a glyph
// and a word go with the colour (the CSS class st-<Name>).
type State struct {
	Name  string // the class: running, completed, failed, …
	Glyph string
	Label string
}

// glyphs are the states' glyphs (made on first use: no table is built
// when a saga-lsp process starts).
var glyphs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"running": "●", "completed": "✓", "failed": "✗", "timeout": "✗", "died": "✗", "blocked": "⊘",
		"stopped": "■", "held": "‖", "waiting": "○", "ready": "◎", "pending": "○", "in_progress": "◐",
		"idle": "–", "broken": "⚠", "starting": "◌", "missing": "?",
	}
})

// stateNames are the states a filter can ask for, in the order offered.
var stateNames = []string{"running", "held", "failed", "timeout", "blocked", "stopped", "in_progress",
	"ready", "waiting", "pending", "completed", "broken"}

// states are the known states, made once.
var states = sync.OnceValue(func() map[string]State {
	m := map[string]State{}
	for name, g := range glyphs() {
		m[name] = State{Name: name, Glyph: g, Label: strings.ReplaceAll(name, "_", " ")}
	}
	return m
})

func stateOf(name string) State {
	if name == "" {
		name = "pending"
	}
	if st, ok := states()[name]; ok {
		return st
	}
	return State{Name: name, Glyph: "•", Label: strings.ReplaceAll(name, "_", " ")}
}

// repoView is one repository at one moment.
type repoView struct {
	repo      *repo
	key, root string
	ws        *store.Workspace
	st        *watch.State
	// epicStory is each story's state in its epic's run, from the derived
	// states the watcher published (epics with a run).
	epicStory map[string]*readmodel.EpicStory
	// epics are the derived states of the epics that ran, by id.
	epics map[string]*readmodel.EpicStatus
	// needed is needs()'s answer, once computed.
	needed map[string][]need
	// evidence derives a story's state as every face does
	// (readmodel.Evidence: the read model), once per view and story.
	evidence func() *readmodel.Evidence
	models   map[string]readmodel.StoryState
}

func (s *Server) newRepoView(r *repo) *repoView {
	v := &repoView{repo: r, key: r.key, root: r.src.Root, ws: r.src.Workspace(), epicStory: map[string]*readmodel.EpicStory{},
		epics: map[string]*readmodel.EpicStatus{}, models: map[string]readmodel.StoryState{}}
	v.evidence = sync.OnceValue(func() *readmodel.Evidence {
		return readmodel.NewEvidence(context.Background(), v.root, r.setup.SessionDir, s.parser)
	})
	if r.src.Watcher != nil {
		v.st = r.src.Watcher.State()
	}
	if v.st != nil {
		for _, e := range v.st.Epics {
			// Only an epic that ran says more than its tasks do: an idle
			// one's waiting and ready are the epic page's to show.
			if e.Status == nil || e.Status.Session == "" {
				continue
			}
			v.epics[e.ID] = e.Status
			for i := range e.Status.Stories {
				es := &e.Status.Stories[i]
				v.epicStory[es.ID] = es
			}
		}
	}
	return v
}

// withEpicStatus lays an epic's freshly derived state over the view.
func (v *repoView) withEpicStatus(st *readmodel.EpicStatus) {
	if st == nil {
		return
	}
	if st.Session != "" {
		v.epics[st.ID] = st
	}
	v.needed = nil
	for i := range st.Stories {
		es := &st.Stories[i]
		v.epicStory[es.ID] = es
	}
}

// counts are a story's done/total tasks as shown: the live view while a
// worker runs, else the read model's (what `status` counts: its
// worktree copy, else its branch, else origin's, else the story's own
// files) — its epic's state where that was derived.
func (v *repoView) counts(s *store.Story) (done, total int) {
	if ss := v.st.Story(s.ID); ss != nil && v.st.Alive(s.ID) && len(ss.View) > 0 {
		for _, st := range ss.View {
			if st == store.StatusCompleted {
				done++
			}
		}
		return done, len(ss.View)
	}
	if es := v.epicStory[s.ID]; es != nil {
		return es.Done, es.Total
	}
	m := v.model(s.ID)
	return m.Done, m.Total
}

// taskStatus is a task's status as shown (the live view first).
func (v *repoView) taskStatus(s *store.Story, t *store.Task) string {
	if ss := v.st.Story(s.ID); ss != nil && (ss.Running || ss.Worktree != nil) {
		if st, ok := ss.View[t.ID]; ok {
			return st
		}
	}
	return cmp.Or(t.Status, store.StatusPending)
}

// journalBlocked is the story's live journal's unresolved blocker.
func (v *repoView) journalBlocked(id string) (bool, string) {
	if ss := v.st.Story(id); ss != nil && ss.Worktree != nil {
		return ss.Worktree.Journal.Blocked, ss.Worktree.Journal.Text
	}
	j := v.st.MainJournal(id)
	return j.Blocked, j.Text
}

// model is the story's state as the read model derives it (what `status`
// says), once per view.
func (v *repoView) model(id string) readmodel.StoryState {
	if st, ok := v.models[id]; ok {
		return st
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := v.evidence().Story(ctx, v.ws, id)
	v.models[id] = st
	return st
}

// nextStep is a story's next step, the read model's: its epic's word on it
// when its epic ran, else its own (readmodel.StoryState.Next).
func (v *repoView) nextStep(s *store.Story) readmodel.NextStep {
	switch es := v.epicStory[s.ID]; {
	case v.st.Alive(s.ID):
		return readmodel.StoryState{ID: s.ID, State: readmodel.EpicRunning}.Next()
	case es != nil && es.State != "":
		return es.Next()
	}
	return v.model(s.ID).Next()
}

// review is the story's review loop as recorded, the read model's: its
// epic's word on it when its epic ran, else its own.
func (v *repoView) review(s *store.Story) *readmodel.ReviewState {
	if es := v.epicStory[s.ID]; es != nil && es.State != "" {
		return es.Review
	}
	return v.model(s.ID).Review
}

// storyState is a story's state as shown, with a word on why.
func (v *repoView) storyState(s *store.Story) (State, string) {
	ss := v.st.Story(s.ID)
	if v.st.Alive(s.ID) {
		detail := ""
		if ss != nil && ss.Run != nil && ss.Run.Running {
			detail = ss.Run.Step
			if ss.Run.Cycle > 0 {
				detail = fmt.Sprintf("%s · cycle %d", detail, ss.Run.Cycle)
			}
		}
		return stateOf("running"), detail
	}
	done, total := v.counts(s)
	if es := v.epicStory[s.ID]; es != nil && es.State != "" && es.State != readmodel.EpicRunning {
		detail := ""
		if len(es.HeldBy) > 0 {
			detail = "held by " + strings.Join(es.HeldBy, ", ")
			if len(es.Conflicts) > 0 {
				detail += " · conflicts: " + strings.Join(es.Conflicts, ", ")
			}
		}
		return stateOf(es.State), detail
	}
	if total > 0 && done == total {
		return stateOf("completed"), ""
	}
	// The outcome of its last run as the read model has it (a reset one
	// is gone from it), never the watcher's last-seen run.
	switch m := v.model(s.ID); m.State {
	case runs.StatusCompleted, runs.StatusFailed, runs.StatusTimeout, runs.StatusBlocked, runs.StatusStopped:
		return stateOf(m.State), m.Why
	}
	if b, text := v.journalBlocked(s.ID); b {
		return stateOf("blocked"), text
	}
	if done > 0 {
		return stateOf("in_progress"), ""
	}
	for _, t := range s.Tasks {
		if v.taskStatus(s, t) == store.StatusInProgress {
			return stateOf("in_progress"), ""
		}
	}
	return stateOf("pending"), ""
}

// cost is what the story's newest run reported spending.
func (v *repoView) cost(id string) float64 {
	if ss := v.st.Story(id); ss != nil && ss.Run != nil {
		if es := v.epicStory[id]; es != nil && es.Cost > 0 {
			return es.Cost
		}
		return ss.Run.Cost
	}
	if es := v.epicStory[id]; es != nil {
		return es.Cost
	}
	return 0
}

// need is something that needs the user: a run that failed, a check that
// failed, a story held in an epic run, a journal ending in a blocker. Key
// names it once per run, so an acknowledged one stays quiet until the
// next run.
type need struct {
	Key, Repo, Story, Epic, Kind, Text string
	// Detail is output shown as lines under the banner (a run's message,
	// a failed check's output): never flattened into Text.
	Detail string
}

func (n need) Href() string {
	if n.Story != "" {
		return storyHref(n.Repo, n.Story)
	}
	return epicHref(n.Repo, n.Epic)
}

// needs are what the repository needs of the user now, by story.
func (v *repoView) needs() map[string][]need {
	if v.needed == nil {
		v.needed = v.findNeeds()
	}
	return v.needed
}

func (v *repoView) findNeeds() map[string][]need {
	out := map[string][]need{}
	add := func(n need) {
		n.Repo = v.key
		out[n.Story] = append(out[n.Story], n)
	}
	if v.st == nil {
		return out
	}
	for id, ss := range v.st.Stories {
		s := v.ws.Story(id)
		if s == nil {
			continue
		}
		if r := ss.Run; r != nil && !r.Running && !v.st.Alive(id) {
			done, total := v.counts(s)
			finished := total > 0 && done == total
			var failedChecks, outputs []string
			for _, t := range slices.Sorted(maps.Keys(r.Checks)) {
				if c := r.Checks[t]; !c.Passed && v.taskStatusByID(s, t) != store.StatusCompleted {
					failedChecks = append(failedChecks, fmt.Sprintf("task %s: check %q failed", t, c.Command))
					if strings.TrimSpace(c.Message) != "" && !strings.Contains(r.Message, strings.TrimSpace(c.Message)) {
						outputs = append(outputs, strings.TrimRight(c.Message, "\n"))
					}
				}
			}
			switch {
			case !finished && (r.State == runs.StatusFailed || r.State == runs.StatusTimeout || r.State == runs.StatusBlocked):
				text := fmt.Sprintf("%s: its run ended %s", id, r.State)
				if len(failedChecks) > 0 {
					text += " · " + strings.Join(failedChecks, "; ")
				}
				detail := strings.Join(append([]string{strings.TrimRight(r.Message, "\n")}, outputs...), "\n\n")
				add(need{Key: "run:" + v.key + ":" + id + ":" + r.Session, Story: id, Kind: r.State, Text: text,
					Detail: strings.TrimSpace(detail)})
			case len(failedChecks) > 0:
				add(need{Key: "check:" + v.key + ":" + id + ":" + r.Session, Story: id, Kind: "check",
					Text: id + ": " + strings.Join(failedChecks, "; "), Detail: strings.Join(outputs, "\n\n")})
			}
		}
	}
	// A journal ends in a blocker only where the watcher read one: the
	// main checkout's journals it reports, the worktree copies it follows.
	journals := map[string]bool{}
	for id := range v.st.MainJournals {
		journals[id] = true
	}
	for id, ss := range v.st.Stories {
		if ss.Worktree != nil {
			journals[id] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(journals)) {
		if v.ws.Story(id) == nil {
			continue
		}
		if b, text := v.journalBlocked(id); b {
			add(need{Key: "journal:" + v.key + ":" + id + ":" + text, Story: id, Kind: "blocked",
				Text: cmp.Or(id+": its journal ends in a blocker: "+text, id+": its journal ends in a blocker")})
		}
	}
	for eid, st := range v.epics {
		for _, es := range st.Stories {
			if es.State != readmodel.EpicHeld {
				continue
			}
			text := fmt.Sprintf("%s is held in epic %s", es.ID, eid)
			if len(es.HeldBy) > 0 {
				text += " by " + strings.Join(es.HeldBy, ", ")
			}
			if len(es.Conflicts) > 0 {
				text += " (their branches conflict in " + strings.Join(es.Conflicts, ", ") + ")"
			}
			add(need{Key: "held:" + v.key + ":" + eid + ":" + st.Session + ":" + es.ID, Story: es.ID, Epic: eid, Kind: "held", Text: text})
		}
	}
	return out
}

func (v *repoView) taskStatusByID(s *store.Story, id string) string {
	if t := s.Task(id); t != nil {
		return v.taskStatus(s, t)
	}
	return ""
}

// filters are the pages' filters, kept in the URL's query.
type filters struct {
	State, Epic, Repo, Q string
	Needs                bool
}

func parseFilters(q url.Values) filters {
	f := filters{State: q.Get("state"), Epic: q.Get("epic"), Repo: q.Get("repo"), Q: strings.TrimSpace(q.Get("q")),
		Needs: q.Get("needs") == "1"}
	if !slices.Contains(stateNames, f.State) {
		f.State = ""
	}
	return f
}

// stories tells whether a filter narrows stories (the home page then lists
// every matching story, not only those outside an epic).
func (f filters) stories() bool { return f.State != "" || f.Q != "" || f.Needs || f.Epic != "" }

// any tells whether any filter is set.
func (f filters) any() bool { return f.stories() || f.Repo != "" }

func (f filters) text(s ...string) bool {
	if f.Q == "" {
		return true
	}
	q := strings.ToLower(f.Q)
	for _, x := range s {
		if strings.Contains(strings.ToLower(x), q) {
			return true
		}
	}
	return false
}

// Query is the filters as a URL query ("" when none).
func (f filters) Query() string {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "epic": f.Epic, "repo": f.Repo, "q": f.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Needs {
		q.Set("needs", "1")
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// storyRow is one story in a table.
type storyRow struct {
	Repo, ID, Title, Epic string
	State                 State
	Detail                string
	Done, Total           int
	Cost                  float64
	PR                    string
	Needs                 int
}

func (r storyRow) Href() string { return storyHref(r.Repo, r.ID) }

func (v *repoView) storyRow(s *store.Story, needs map[string][]need) storyRow {
	st, detail := v.storyState(s)
	done, total := v.counts(s)
	row := storyRow{Repo: v.key, ID: s.ID, Title: s.Title, Epic: s.EpicID(), State: st, Detail: detail, Done: done, Total: total,
		Cost: v.cost(s.ID), PR: s.PR, Needs: len(needs[s.ID])}
	if es := v.epicStory[s.ID]; es != nil && es.PR != "" {
		row.PR = es.PR
	}
	if ss := v.st.Story(s.ID); row.PR == "" && ss != nil && ss.Run != nil {
		row.PR = ss.Run.PR
	}
	if v.ws.Epic(row.Epic) == nil {
		row.Epic = ""
	}
	return row
}

func (f filters) matchStory(r *storyRow) bool {
	return (f.State == "" || r.State.Name == f.State) && (f.Epic == "" || r.Epic == f.Epic) &&
		(!f.Needs || r.Needs > 0) && f.text(r.ID, r.Title)
}

// epicRow is one epic in the home table.
type epicRow struct {
	Repo, ID, Title            string
	State                      State
	Stories, StoriesDone       int
	Done, Total                int // tasks
	Running, Held, Failed      int
	Cost                       float64
	Needs                      int
	Diagnostics                int
	matchState, matchTextChild bool
}

func (r epicRow) Href() string { return epicHref(r.Repo, r.ID) }

func (v *repoView) epicRow(e *store.Epic, rows map[string]*storyRow) epicRow {
	row := epicRow{Repo: v.key, ID: e.ID, Title: e.Title}
	states := map[string]bool{}
	for _, c := range e.Children {
		r, ok := rows[c.ID]
		if !ok {
			continue
		}
		row.Stories++
		row.Done += r.Done
		row.Total += r.Total
		row.Cost += r.Cost
		row.Needs += r.Needs
		states[r.State.Name] = true
		switch r.State.Name {
		case "completed":
			row.StoriesDone++
		case "running":
			row.Running++
		case "held":
			row.Held++
		case "failed", "timeout", "blocked":
			row.Failed++
		}
	}
	// The run's own word once it ended (its epic.end status); liveness
	// and the stories' states otherwise.
	run := v.epics[e.ID]
	if run != nil && run.Cost > 0 {
		row.Cost = run.Cost
	}
	var state string
	switch {
	case v.st.EpicRunning(e.ID) || row.Running > 0:
		state = "running"
	case row.Stories > 0 && row.StoriesDone == row.Stories:
		state = "completed"
	case run != nil && run.State != "running" && run.State != "idle" && run.State != "":
		state = run.State
	case row.Failed > 0:
		state = "failed"
	case row.Held > 0:
		state = "held"
	case row.Done > 0 || states["in_progress"]:
		state = "in_progress"
	default:
		state = "pending"
	}
	row.State = stateOf(state)
	return row
}

func storyHref(repo, id string) string {
	return "/r/" + url.PathEscape(repo) + "/story/" + url.PathEscape(id)
}
func epicHref(repo, id string) string {
	return "/r/" + url.PathEscape(repo) + "/epic/" + url.PathEscape(id)
}
