package dashboard

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

// page is what the layout shows around every page's content.
type page struct {
	Title    string
	Path     string // the filter form's target
	Filters  filters
	Repos    []string
	Epics    []string
	States   []string
	Needs    []need // not acknowledged
	Problems int
	// Scope tells the page's script which changes concern it: "home",
	// "problems", "epic", "story", "review".
	Scope, ScopeRepo, ScopeID, ScopeStories string
	Seq                                     uint64 // the change notices sent before this page was made
	Content                                 any
	// Held is the page a live page fetching itself holds, as sums
	// (parts.go): what is sent is what changed of it.
	Held []string
}

// base is the layout's part of a page for r.
func (s *Server) base(r *http.Request, title, scope string, views []*repoView) page {
	p := page{Title: title, Path: r.URL.Path, Filters: parseFilters(r.URL.Query()), States: stateNames, Scope: scope,
		Seq: s.hub.currentSeq(), Held: heldSums(r)}
	epics := map[string]bool{}
	for _, rp := range s.repos {
		p.Repos = append(p.Repos, rp.key)
	}
	for _, v := range views {
		for e := range v.ws.Epics() {
			epics[e.ID] = true
		}
		for _, ds := range v.needs() {
			for _, n := range ds {
				if !s.isAcked(n.Key) {
					p.Needs = append(p.Needs, n)
				}
			}
		}
		e, w := v.repo.problemCounts(v.ws)
		p.Problems += e + w
	}
	slices.SortFunc(p.Needs, func(a, b need) int { return cmp.Compare(a.Key, b.Key) })
	p.Epics = slices.Sorted(maps.Keys(epics))
	return p
}

func (s *Server) views() []*repoView {
	out := make([]*repoView, len(s.repos))
	for i, r := range s.repos {
		out[i] = s.newRepoView(r)
	}
	return out
}

// render writes the page as it is made: a page of thousands of rows is
// never held whole in memory. The writes, thousands of short strings, go
// through a buffer of renderChunk: each write to the response takes its
// locks and checks, a third of a 200-story epic page's rendering. A live
// page fetching itself gets what changed of it (parts.go): its frame
// changed, the page is made again and sent whole.
func (s *Server) render(w http.ResponseWriter, status int, p page, content func(h *hw)) {
	if p.Held != nil && status == http.StatusOK && s.renderChanged(w, p, content) {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	bw := bufio.NewWriterSize(w, renderChunk)
	h := &hw{w: bw, sums: newPageSums(nil)}
	h.layout(p, func() { content(h) })
	if h.err == nil {
		h.err = bw.Flush()
	}
}

// renderChunk is how much of a page render sends at once.
const renderChunk = 32 << 10

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	p := s.base(r, "Not found", "message", s.views())
	p.Content = message{Title: "Not found", Text: msg, Back: "/"}
	s.render(w, http.StatusNotFound, p, func(h *hw) { h.message(p.Content.(message)) })
}

// message is a page saying one thing, with a way back.
type message struct {
	Title, Text, Back string
	OK                bool
}

// repoOf is the request's repository, or nil (a 404 sent).
func (s *Server) repoOf(w http.ResponseWriter, r *http.Request) *repo {
	rp := s.byKey[r.PathValue("repo")]
	if rp == nil {
		s.notFound(w, r, fmt.Sprintf("no repository %q in this dashboard", r.PathValue("repo")))
	}
	return rp
}

// ---------------------------------------------------------------------------
// home

type homeRepo struct {
	Key, Root         string
	StoryCount        int
	EpicCount         int
	Errors, Warnings  int
	Epics             []epicRow
	Stories           []*storyRow
	StoriesCaption    string
	HiddenEpics       int
	StandaloneHidden  bool
	ShowStoriesInEpic bool
}

type homeContent struct {
	Repos []homeRepo
	Rows  int // every row of every table, for the tests and benchmarks
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	views := s.views()
	p := s.base(r, "Backlog", "home", views)
	f := p.Filters
	var c homeContent
	for _, v := range views {
		if f.Repo != "" && f.Repo != v.key {
			continue
		}
		needs := v.needs()
		hr := homeRepo{Key: v.key, Root: v.root, StoryCount: v.ws.StoryCount(), EpicCount: v.ws.EpicCount()}
		hr.Errors, hr.Warnings = v.repo.problemCounts(v.ws)
		// One row per story, built once and pointed at from the map and
		// the tables: a page of W's 2,000 stories allocated twice over.
		sorted := v.ws.SortedStoryIDs()
		all := make([]storyRow, 0, len(sorted))
		rows := make(map[string]*storyRow, len(sorted))
		for _, id := range sorted {
			if st := v.ws.Story(id); st != nil {
				all = append(all, v.storyRow(st, needs))
			}
		}
		for i := range all {
			rows[all[i].ID] = &all[i]
		}
		for _, id := range v.ws.SortedEpicIDs() {
			e := v.ws.Epic(id)
			er := v.epicRow(e, rows)
			if (f.Epic == "" || f.Epic == e.ID) && (f.State == "" || er.State.Name == f.State || childState(e, rows, f.State)) &&
				(!f.Needs || er.Needs > 0) && (f.text(e.ID, e.Title) || childText(e, rows, f)) {
				hr.Epics = append(hr.Epics, er)
			}
		}
		if f.stories() {
			hr.StoriesCaption = "Stories matching the filter"
		} else {
			hr.StoriesCaption = "Stories outside an epic"
		}
		for i := range all {
			row := &all[i]
			if !f.stories() && row.Epic != "" {
				continue
			}
			if f.matchStory(row) {
				hr.Stories = append(hr.Stories, row)
			}
		}
		c.Rows += len(hr.Epics) + len(hr.Stories)
		c.Repos = append(c.Repos, hr)
	}
	p.Content = c
	s.render(w, http.StatusOK, p, func(h *hw) { h.home(p, c) })
}

func childState(e *store.Epic, rows map[string]*storyRow, state string) bool {
	for _, ch := range e.Children {
		if r := rows[ch.ID]; r != nil && r.State.Name == state {
			return true
		}
	}
	return false
}

func childText(e *store.Epic, rows map[string]*storyRow, f filters) bool {
	for _, ch := range e.Children {
		if r, ok := rows[ch.ID]; ok && f.text(r.ID, r.Title) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// problems

type problemRow struct {
	Repo, File, Href, Severity, Code, Message string
	Line, Col                                 int
	Fixes                                     []string
}

type problemsContent struct {
	Rows    []problemRow
	Total   int
	Clipped bool
}

// maxProblemRows bounds the problems table; the filters narrow it.
const maxProblemRows = 5000

func (s *Server) problems(w http.ResponseWriter, r *http.Request) {
	views := s.views()
	p := s.base(r, "Problems", "problems", views)
	f := p.Filters
	var c problemsContent
	for _, v := range views {
		if f.Repo != "" && f.Repo != v.key {
			continue
		}
		for _, d := range v.ws.Diagnostics() {
			_, owner, _ := store.Classify(d.File)
			kind, _, _ := store.Classify(d.File)
			if f.Epic != "" && !(kind == store.KindEpic && owner == f.Epic) &&
				!(kind != store.KindEpic && v.ws.Story(owner) != nil && v.ws.Story(owner).EpicID() == f.Epic) {
				continue
			}
			if !f.text(d.File, d.Message, string(d.Code)) {
				continue
			}
			c.Total++
			if len(c.Rows) >= maxProblemRows {
				c.Clipped = true
				continue
			}
			row := problemRow{Repo: v.key, File: d.File, Severity: d.Severity.String(), Code: string(d.Code), Message: d.Message,
				Line: d.Range.Start.Line + 1, Col: d.Range.Start.Character + 1, Fixes: store.FixTitles(v.ws.File(d.File), d)}
			switch kind {
			case store.KindStory, store.KindTask, store.KindJournal:
				if v.ws.Story(owner) != nil {
					row.Href = storyHref(v.key, owner)
				}
			case store.KindEpic:
				if v.ws.Epic(owner) != nil {
					row.Href = epicHref(v.key, owner)
				}
			}
			c.Rows = append(c.Rows, row)
		}
	}
	p.Content = c
	s.render(w, http.StatusOK, p, func(h *hw) { h.problems(p, c) })
}

// ---------------------------------------------------------------------------
// epic

type epicStoryRow struct {
	storyRow
	HeldBy    []string
	Conflicts []string
	Branch    string
	Actions   *readmodel.ActionsRun // its GitHub Actions run, when it runs or ran there
	Checks    string                // the checks digest: "✓ 3 · ✗ 1"
	Critical  bool
	Match     bool
	Exists    bool
	Land      landView
}

type graphNode struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	State    string `json:"state"`
	Glyph    string `json:"glyph"`
	Label    string `json:"label"`
	Href     string `json:"href"`
	Done     int    `json:"done"`
	Total    int    `json:"total"`
	Critical bool   `json:"critical"`
	Match    bool   `json:"match"`
}

type graphEdge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Critical bool   `json:"critical"`
	Cycle    bool   `json:"cycle"`
}

type epicContent struct {
	Repo, ID, Title, Description string
	State                        State
	Status                       *readmodel.EpicStatus
	Rows                         []epicStoryRow
	Graph                        string // JSON: nodes and edges
	Critical                     []string
	Stories, StoriesDone         int
	Done, Total                  int
	Running                      int
	Cost                         float64
	CapReached                   bool
	MaxParallel                  int
	RunnerAlive                  bool
	Session                      string
	ExitCode                     *int
	Outcome                      stats.Figures // the epic's outcome, counted (docs/landing.md#the-epics-outcome-counted)
	Landable                     bool          // a story's PR is not landed: Land has work
}

func (s *Server) epic(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil {
		return
	}
	id := r.PathValue("id")
	v := s.newRepoView(rp)
	e := v.ws.Epic(id)
	if e == nil || !store.ValidCanonical(id) {
		s.notFound(w, r, fmt.Sprintf("no epic %q in %s", id, rp.key))
		return
	}
	var st *readmodel.EpicStatus
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	if rp.src.Watcher != nil {
		st = rp.src.Watcher.EpicStatus(ctx, v.ws, id)
	} else {
		st, _ = readmodel.EpicState(ctx, v.ws, readmodel.ViewQuery(rp.src.Root, id, s.env, s.parser))
	}
	v.withEpicStatus(st)
	p := s.base(r, "Epic "+id, "epic", []*repoView{v})
	p.ScopeRepo, p.ScopeID = rp.key, id
	f := p.Filters
	needs := v.needs()
	c := epicContent{Repo: rp.key, ID: id, Title: e.Title, Description: e.Description, Status: st, RunnerAlive: v.st.EpicRunning(id),
		Outcome: stats.Of(&stats.Reader{Root: rp.src.Root, Runs: &rp.records, Memo: &rp.outcomes}, v.ws, id, store.NameEpic)}
	planned, _ := store.PlanFor(v.ws, id, store.NameEpic)
	items := planned.Items
	states := plan.States(items)
	if st != nil {
		states = st.GraphStates(items)
		c.MaxParallel, c.Session, c.ExitCode, c.Cost = st.MaxParallel, st.Session, st.ExitCode, st.Cost
	}
	if st != nil {
		c.CapReached = st.CapReached
	}
	c.Critical = plan.CriticalPath(items, states)
	onPath := map[string]int{}
	for i, cid := range c.Critical {
		onPath[cid] = i + 1
	}
	var nodes []graphNode
	var edges []graphEdge
	var member []string
	known := map[string]bool{}
	for _, it := range items {
		known[it.ID] = true
	}
	for _, it := range items {
		member = append(member, it.ID)
		row := epicStoryRow{storyRow: storyRow{Repo: rp.key, ID: it.ID, Title: it.Subject, State: stateOf(states[it.ID])}}
		if story := v.ws.Story(it.ID); story != nil {
			row.storyRow = v.storyRow(story, needs)
			row.Exists = true
			if states[it.ID] == plan.StateBroken {
				row.State = stateOf("broken")
			}
		} else {
			row.State = stateOf("missing")
		}
		if es := v.epicStory[it.ID]; es != nil {
			row.HeldBy, row.Conflicts, row.Branch, row.Actions = es.HeldBy, es.Conflicts, es.Branch, es.Actions
		}
		if row.Exists {
			row.Land = v.landOf(it.ID)
			c.Landable = c.Landable || row.Land.landable()
		}
		if ss := v.st.Story(it.ID); ss != nil && ss.Run != nil {
			pass, fail := 0, 0
			for _, ch := range ss.Run.Checks {
				if ch.Passed {
					pass++
				} else {
					fail++
				}
			}
			if pass+fail > 0 {
				row.Checks = fmt.Sprintf("✓ %d · ✗ %d", pass, fail)
			}
		}
		row.Critical = onPath[it.ID] > 0
		row.Match = f.matchStory(&row.storyRow)
		c.Stories++
		c.Done += row.Done
		c.Total += row.Total
		switch row.State.Name {
		case "completed":
			c.StoriesDone++
		case "running":
			c.Running++
		}
		if st == nil {
			c.Cost += row.Cost
		}
		c.Rows = append(c.Rows, row)
		nodes = append(nodes, graphNode{ID: it.ID, Title: it.Subject, State: row.State.Name, Glyph: row.State.Glyph,
			Label: row.State.Label, Href: storyHref(rp.key, it.ID), Done: row.Done, Total: row.Total, Critical: row.Critical, Match: row.Match})
		seen := map[string]bool{}
		for _, b := range it.BlockedBy {
			if !known[b] || seen[b] {
				continue
			}
			seen[b] = true
			crit := onPath[b] > 0 && onPath[it.ID] == onPath[b]+1
			edges = append(edges, graphEdge{From: b, To: it.ID, Critical: crit})
		}
	}
	pl := plan.Compute(items, plan.DefaultMaxParallel)
	cycle := map[[2]string]bool{}
	for _, cy := range pl.Cycles {
		for i := 0; i+1 < len(cy); i++ {
			cycle[[2]string{cy[i+1], cy[i]}] = true // cy[i] is blocked by cy[i+1]
			cycle[[2]string{cy[i], cy[i+1]}] = true
		}
	}
	for i := range edges {
		edges[i].Cycle = cycle[[2]string{edges[i].From, edges[i].To}]
	}
	if nodes == nil {
		nodes = []graphNode{}
	}
	if edges == nil {
		edges = []graphEdge{}
	}
	graph, _ := json.Marshal(map[string]any{"nodes": nodes, "edges": edges})
	c.Graph = string(graph)
	epicState := newEpicState(v, e, c)
	c.State = epicState
	p.ScopeStories = strings.Join(member, " ")
	p.Content = c
	s.render(w, http.StatusOK, p, func(h *hw) { h.epic(p, c) })
}

// newEpicState is the epic's state as the home page shows it.
func newEpicState(v *repoView, e *store.Epic, c epicContent) State {
	rows := make(map[string]*storyRow, len(c.Rows))
	for i := range c.Rows {
		rows[c.Rows[i].ID] = &c.Rows[i].storyRow
	}
	return v.epicRow(e, rows).State
}

// ---------------------------------------------------------------------------
// story

type taskRow struct {
	ID, Subject, Description, ActiveForm, Priority, Guidance, DoneWhen string
	Status                                                             State
	BlockedBy                                                          []string
	Checks                                                             []string
	Check                                                              *runs.CheckResult
	Broken                                                             string
}

type runRow struct {
	Session, State, Message, Started, Ended, OutputFile string
	Cost                                                float64
	ExitCode                                            *int
	DryRun, Running                                     bool
	Cycles                                              int
}

type outputView struct {
	Story, Repo, File, Text  string
	Truncated, Running, None bool
	Href                     string
}

type storyContent struct {
	Repo, ID, Title, Description, Guidance, DoneWhen, Avoid string
	Epic                                                    string
	State                                                   State
	Detail                                                  string
	Next                                                    readmodel.NextStep
	Review                                                  *readmodel.ReviewState
	Done, Total                                             int
	PR, Branch, Worktree                                    string
	Cost                                                    float64
	Tasks                                                   []taskRow
	Journal                                                 markup // rendered from escaped text (files.go)
	JournalTruncated                                        bool
	Runs                                                    []runRow
	Output                                                  outputView
	Running                                                 bool
	LastRun                                                 *runRow
	DryRunDefault                                           bool
	InWorktree                                              bool
	Land                                                    landView
}

func (s *Server) story(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil {
		return
	}
	id := r.PathValue("id")
	v := s.newRepoView(rp)
	st := v.ws.Story(id)
	if st == nil || !store.ValidCanonical(id) || !storyInside(rp, st) {
		s.notFound(w, r, fmt.Sprintf("no story %q in %s", id, rp.key))
		return
	}
	if e := v.ws.Epic(st.EpicID()); e != nil && v.st.Epic(e.ID) != nil {
		// The story's state in its epic's run, as the epic page shows it.
		if es := v.st.Epic(e.ID).Status; es != nil && es.Session != "" {
			v.withEpicStatus(es)
		}
	}
	p := s.base(r, "Story "+id, "story", []*repoView{v})
	p.ScopeRepo, p.ScopeID = rp.key, id
	state, detail := v.storyState(st)
	done, total := v.counts(st)
	c := storyContent{Repo: rp.key, ID: id, Title: st.Title, Description: st.Description, Guidance: st.Guidance,
		DoneWhen: st.DoneWhen, Avoid: st.Avoid, State: state, Detail: detail, Done: done, Total: total,
		PR: st.PR, Branch: st.Branch, Cost: v.cost(id), Running: v.st.Alive(id), InWorktree: st.InWorktree, Next: v.nextStep(st), Review: v.review(st)}
	if e := v.ws.Epic(st.EpicID()); e != nil {
		c.Epic = e.ID
	}
	c.Land = v.landOf(id)
	copies := v.ws.Copies(id)
	if wt := copies.WorktreeDir(); wt != "" {
		c.Worktree = wt
		if c.Branch == "" { // the run's: story.json keeps it only for runs before issue 23
			c.Branch = runs.StoryBranch(id)
		}
	}
	if ss := v.st.Story(id); ss != nil && ss.Run != nil && ss.Run.PR != "" {
		c.PR = ss.Run.PR
	}
	// Tasks, TaskList-style: unfinished blockers only; a broken file is
	// never shown as a task.
	broken := map[string]string{}
	for _, it := range store.TaskPlanItems(st) {
		if it.Broken != "" {
			broken[it.ID] = it.Broken
		}
	}
	ss := v.st.Story(id)
	for _, t := range st.Tasks {
		tr := taskRow{ID: t.ID, Subject: t.Subject, Description: t.Description, ActiveForm: t.ActiveForm, Priority: t.Priority,
			Guidance: t.Guidance, DoneWhen: t.DoneWhen, Status: stateOf(v.taskStatus(st, t)), Broken: broken[t.ID]}
		if tr.Broken != "" {
			tr.Status = stateOf("broken")
		}
		for _, b := range t.BlockedBy {
			if bt := st.Task(b.ID); bt == nil || v.taskStatus(st, bt) != store.StatusCompleted {
				tr.BlockedBy = append(tr.BlockedBy, b.ID)
			}
		}
		for _, ch := range t.Checks {
			tr.Checks = append(tr.Checks, ch.Command)
		}
		if ss != nil && ss.Run != nil {
			if res, ok := ss.Run.Checks[t.ID]; ok {
				tr.Check = &res
			}
		}
		c.Tasks = append(c.Tasks, tr)
	}
	// The journal: the live copy's (the worktree's while there is one).
	if st.Journal != nil {
		data, truncated, err := readInside(rp.src.Root, path.Join(st.Dir, "journal.md"), maxJournal)
		if err == nil {
			c.Journal, c.JournalTruncated = renderMarkdown(string(data)), truncated
		}
	}
	// Runs, newest first.
	dir := rp.setup.SessionDir
	rfs := runs.Runs(dir, runs.KindStory, id)
	for i := len(rfs) - 1; i >= 0 && len(c.Runs) < 10; i-- {
		run := runs.ReadRun(rfs[i].EventsFile)
		if run == nil {
			continue
		}
		rr := runRow{Session: run.Session, State: run.State, Message: run.Message, Cost: run.Cost, ExitCode: run.ExitCode,
			DryRun: run.DryRun, Running: !run.Ended, Cycles: run.Cycle, OutputFile: run.OutputFile}
		// The live snapshot may lag the record just read: once the record
		// has its end, the run's outcome is that end.
		if ss != nil && ss.Run != nil && ss.Run.Session == run.Session && !run.Ended {
			rr.State, rr.Running, rr.Message = ss.Run.State, ss.Run.Running, cmp.Or(ss.Run.Message, rr.Message)
		}
		if !run.Started.IsZero() {
			rr.Started = run.Started.Local().Format("2006-01-02 15:04:05")
		}
		if run.Ended {
			if fi, err := os.Stat(run.EventsFile); err == nil {
				rr.Ended = fi.ModTime().Local().Format("2006-01-02 15:04:05")
			}
		}
		c.Runs = append(c.Runs, rr)
	}
	if len(c.Runs) > 0 {
		c.LastRun = &c.Runs[0]
		c.DryRunDefault = c.Runs[0].DryRun
		if c.Cost == 0 {
			c.Cost = c.Runs[0].Cost
		}
	}
	c.Output = s.outputOf(rp, v, id)
	p.Content = c
	s.render(w, http.StatusOK, p, func(h *hw) { h.story(p, c) })
}

// storyInside tells whether the story's folder lies inside the workspace
// (a folder that is a link to elsewhere is not shown).
func storyInside(rp *repo, st *store.Story) bool {
	return within(rp.src.Root, filepath.Join(rp.src.Root, filepath.FromSlash(st.Dir)))
}

// outputOf is the tail of the story's running (else last) worker's output.
func (s *Server) outputOf(rp *repo, v *repoView, id string) outputView {
	o := outputView{Story: id, Repo: rp.key, Href: storyHref(rp.key, id) + "/output"}
	if ss := v.st.Story(id); ss != nil && ss.Run != nil {
		o.File, o.Running = ss.Run.OutputFile, ss.Run.Running
	}
	if o.File == "" {
		if rfs := runs.Runs(rp.setup.SessionDir, runs.KindStory, id); len(rfs) > 0 {
			o.File = runs.OutputOfEvents(rfs[len(rfs)-1].EventsFile)
		}
	}
	if o.File == "" {
		o.None = true
		return o
	}
	text, truncated, err := tail(o.File, maxTail)
	if err != nil {
		o.None = true
		return o
	}
	o.Text, o.Truncated = text, truncated
	return o
}

// storyOutput is the output fragment alone, fetched as the output grows.
func (s *Server) storyOutput(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil {
		return
	}
	id := r.PathValue("id")
	v := s.newRepoView(rp)
	if v.ws.Story(id) == nil || !store.ValidCanonical(id) {
		httpError(w, "saga-lsp dashboard: no such story", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	(&hw{w: w}).output(s.outputOf(rp, v, id))
}
