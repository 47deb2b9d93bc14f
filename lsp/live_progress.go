package lsp

// What the server tells the client of runs, as the watcher reports them
// (watch.Sink): saga/workerProgress, saga/epicProgress and saga/taskStatus
// for clients that opt in, a cancellable work-done progress per running
// worker and per announced epic run, diagnostics republished, and code-lens
// refreshes. The watcher calls these in order from its goroutines, so a
// progress's end never overtakes its begin.

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
	"go.lsp.dev/protocol"
)

// workerProgressParams is the saga/workerProgress notification.
type workerProgressParams struct {
	Story      string `json:"story"`
	Session    string `json:"session"`
	State      string `json:"state"`
	Step       string `json:"step"`
	Cycle      int    `json:"cycle"`
	Done       int    `json:"done"`
	Total      int    `json:"total"`
	Message    string `json:"message"`
	OutputFile string `json:"outputFile"`
}

// taskStatusParams is the saga/taskStatus notification.
type taskStatusParams struct {
	Story   string `json:"story"`
	Task    string `json:"task"`
	Subject string `json:"subject"`
	From    string `json:"from"`
	To      string `json:"to"`
	Source  string `json:"source"` // hook | worktree | claude
}

// epicProgressParams is the saga/epicProgress notification.
type epicProgressParams struct {
	Epic    string            `json:"epic"`
	Session string            `json:"session"`
	State   string            `json:"state"`
	Running []string          `json:"running"`
	Done    int               `json:"done"`
	Total   int               `json:"total"`
	Held    []string          `json:"held"`
	Failed  []string          `json:"failed"`
	Cost    float64           `json:"cost"`
	Stories []epicStoryParams `json:"stories"`
	// DryRun: a dry run's progress — simulated, never the stories' own.
	DryRun bool `json:"dryRun,omitempty"`
}

// epicStoryParams is one story of saga/epicProgress.
type epicStoryParams struct {
	ID     string   `json:"id"`
	State  string   `json:"state"`
	HeldBy []string `json:"heldBy"`
	Done   int      `json:"done"`
	Total  int      `json:"total"`
	// URL and Actions are its GitHub Actions run's page and state, when it
	// runs or ran there.
	URL     string `json:"url,omitempty"`
	Actions string `json:"actions,omitempty"`
}

// WorkerProgress implements watch.Sink: saga/workerProgress, then the
// worker's work-done progress.
func (l *live) WorkerProgress(p watch.WorkerProgress) {
	wp := &workerProgressParams{Story: p.Story, Session: p.Session, State: p.State, Step: p.Step, Cycle: p.Cycle,
		Done: p.Done, Total: p.Total, Message: p.Message, OutputFile: p.OutputFile}
	l.notifySaga("saga/workerProgress", wp)
	l.s.dash.sink(l.root).WorkerProgress(p)
	l.progressStep(p.Session, stopTarget{story: p.Story, session: p.Session}, p.First, p.Ended,
		"SAGA "+p.Story, progressText(wp), percent(p.Done, p.Total))
}

// TaskStatus implements watch.Sink: saga/taskStatus.
func (l *live) TaskStatus(c watch.TaskStatus) {
	l.notifySaga("saga/taskStatus", &taskStatusParams{Story: c.Story, Task: c.Task, Subject: c.Subject,
		From: c.From, To: c.To, Source: c.Source})
	l.s.dash.sink(l.root).TaskStatus(c)
}

// EpicProgress implements watch.Sink: saga/epicProgress, then the epic
// run's work-done progress.
func (l *live) EpicProgress(p watch.EpicProgress) {
	ep := &epicProgressParams{Epic: p.Epic, Session: p.Session, State: p.State, Running: p.Running, Done: p.Done,
		Total: p.Total, Held: p.Held, Failed: p.Failed, Cost: p.Cost, Stories: make([]epicStoryParams, 0, len(p.Stories)), DryRun: p.DryRun}
	for _, s := range p.Stories {
		sp := epicStoryParams{ID: s.ID, State: s.State, HeldBy: s.HeldBy, Done: s.Done, Total: s.Total}
		if s.Actions != nil {
			sp.URL, sp.Actions = s.Actions.URL, s.Actions.State()
		}
		ep.Stories = append(ep.Stories, sp)
	}
	l.notifySaga("saga/epicProgress", ep)
	l.s.dash.sink(l.root).EpicProgress(p)
	l.progressStep("epic "+p.Epic, stopTarget{epic: p.Epic}, p.First, p.Ended,
		"SAGA epic "+p.Epic, epicProgressText(ep), percent(p.Done, p.Total))
}

// FilesChanged implements watch.Sink: the files' diagnostics are
// republished (their LSP-only findings follow the runs). A worktree copy's
// file the watcher read otherwise than the snapshot holds is handed to the
// funnel: a client's watcher may miss it (docs/architecture.md#one-funnel-for-disk-changes).
func (l *live) FilesChanged(rels []string) {
	if stale := l.staleWorktreeFiles(rels); len(stale) > 0 {
		l.s.diskChanged(stale)
	}
	l.s.pub.queue(rels)
	l.s.dash.sink(l.root).FilesChanged(rels)
}

// staleWorktreeFiles are the worktree copy files of rels (absolute) whose
// contents the watcher's state and the snapshot disagree on.
func (l *live) staleWorktreeFiles(rels []string) []string {
	var stale []string
	ws, st := l.s.current().WS, l.state()
	for _, rel := range rels {
		rest, ok := strings.CutPrefix(rel, store.WorktreesRel+"/")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, "/")
		var seen *store.File
		if s := st.Story(id); s != nil && s.Worktree != nil {
			seen = s.Worktree.Files[rel]
		}
		held := ws.File(rel)
		if (seen == nil) != (held == nil) || seen != nil && !bytes.Equal(seen.Src, held.Src) {
			stale = append(stale, filepath.Join(l.root, filepath.FromSlash(rel)))
		}
	}
	return stale
}

// Refresh implements watch.Sink: the lenses are refreshed.
func (l *live) Refresh() {
	l.bell.ring()
	l.s.dash.sink(l.root).Refresh()
}

// percent is a work-done progress's percentage.
func percent(done, total int) uint32 {
	if total <= 0 {
		return 0
	}
	return uint32(done * 100 / total)
}

// runProgress is a run's cancellable work-done progress.
type runProgress struct {
	prog       *progress
	token      string
	target     stopTarget
	cancelling bool // a stop asked for by cancelling it is under way
}

// stopTarget is the run a progress's cancel stops: a worker's (story and
// session) or an epic's runner.
type stopTarget struct {
	story, session, epic string
}

// stopper says what cancelling does now, from the watcher's State: a nil
// stop once the run is over.
func (t stopTarget) stopper(st *watch.State, setup control.Setup) (string, func(context.Context) error) {
	if t.epic != "" {
		if e := st.Epic(t.epic); e == nil || !e.Alive {
			return "", nil
		}
		epic := t.epic
		return "stop epic " + epic, func(ctx context.Context) error {
			_, err := control.StopEpic(ctx, control.StopOptions{Setup: setup, Story: epic})
			return err
		}
	}
	if s := st.Story(t.story); s == nil || s.Run == nil || s.Run.Session != t.session || !s.Run.Running {
		return "", nil
	}
	story := t.story
	return "stop " + story, func(ctx context.Context) error {
		_, err := control.StopStory(ctx, control.StopOptions{Setup: setup, Story: story})
		return err
	}
}

// progressStep shows a run's work-done progress now: begin on its first
// state (unless it ended already), end at its end, else a report.
func (l *live) progressStep(key string, target stopTarget, first, ending bool, title, text string, pct uint32) {
	switch {
	case first && !ending:
		l.beginCancellableProgress(title, text, pct, func(pr *progress, token string) {
			rp := &runProgress{prog: pr, token: token, target: target}
			l.progs[key] = rp
			l.tokens[token] = rp
		})
	case ending:
		l.mu.Lock()
		rp := l.progs[key]
		delete(l.progs, key)
		if rp != nil {
			delete(l.tokens, rp.token)
		}
		l.mu.Unlock()
		if rp != nil {
			rp.prog.end(text)
		}
	default:
		l.mu.Lock()
		rp := l.progs[key]
		l.mu.Unlock()
		if rp != nil {
			rp.prog.reportPercent(text, pct)
		}
	}
}

// progressText is the work-done progress message: "3/7 tasks · cycle 2 · loop".
func progressText(p *workerProgressParams) string {
	parts := []string{fmt.Sprintf("%d/%d tasks", p.Done, p.Total)}
	if p.Cycle > 0 {
		parts = append(parts, "cycle "+strconv.Itoa(p.Cycle))
	}
	switch p.State {
	case runs.StateStarting, runs.StateRunning:
		if p.Step != "" {
			parts = append(parts, p.Step)
		}
	default:
		parts = append([]string{p.State}, parts...)
	}
	return strings.Join(parts, " · ")
}

// epicProgressText is the work-done progress message: "3/8 stories · 2
// running" while the run lives, "failed · 5/8 stories · held: shop--d" at
// its end.
func epicProgressText(p *epicProgressParams) string {
	dry := ""
	if p.DryRun {
		dry = "dry run " // simulated: never the stories' own progress
	}
	if p.State == runs.StateRunning {
		return fmt.Sprintf("%s%d/%d stories · %d running", dry, p.Done, p.Total, len(p.Running))
	}
	s := fmt.Sprintf("%s%s · %d/%d stories", dry, p.State, p.Done, p.Total)
	if len(p.Failed) > 0 {
		s += " · not completed: " + strings.Join(p.Failed, ", ")
	}
	if len(p.Held) > 0 {
		s += " · held: " + strings.Join(p.Held, ", ")
	}
	return s
}

func (l *live) notifySaga(method string, params any) {
	l.s.mu.Lock()
	ok := l.s.client.sagaNotifications
	l.s.mu.Unlock()
	if ok {
		l.s.notify(method, params)
	}
}

// beginCancellableProgress starts a work-done progress whose cancellation
// stops a run (work_done_progress_cancel.go), when the client supports
// them: once the client created it, and before it is begun (so a cancel
// can never come first), own records it under mu.
func (l *live) beginCancellableProgress(title, message string, pct uint32, own func(p *progress, token string)) {
	s := l.s
	s.mu.Lock()
	ok := s.client.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return
	}
	token := protocol.String(fmt.Sprintf("saga-%d", s.nextToken.Add(1)))
	ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
	defer cancel()
	if err := s.call(ctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.log.Debug("workDoneProgress/create", "err", err)
		return
	}
	l.mu.Lock()
	own(&progress{s: s, token: token}, string(token))
	l.mu.Unlock()
	yes := true
	begin := &protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Cancellable: &yes, Message: &message, Percentage: &pct}
	s.notify("$/progress", &protocol.ProgressParams{Token: token, Value: mustRaw(begin)})
}

func (p *progress) reportPercent(message string, pct uint32) {
	if p.s == nil {
		return
	}
	p.s.notify("$/progress", &protocol.ProgressParams{Token: p.token,
		Value: mustRaw(&protocol.WorkDoneProgressReport{Kind: "report", Message: &message, Percentage: &pct})})
}

// refresher sends workspace/codeLens/refresh when the bell rings, at most
// one at a time, to clients that support it.
func (l *live) refresher() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.bell:
		}
		l.s.mu.Lock()
		ok := l.s.client.codeLensRefresh
		l.s.mu.Unlock()
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
		if err := l.s.call(ctx, "workspace/codeLens/refresh", nil, nil); err != nil {
			l.s.log.Debug("codeLens/refresh", "err", err)
		}
		cancel()
		select { // coalesce a burst
		case <-l.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
