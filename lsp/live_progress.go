package lsp

// What the server tells the client of runs: saga/workerProgress and
// saga/taskStatus for clients that opt in, a cancellable work-done progress
// per running worker, and code-lens refreshes.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
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

// progressUpdate sends saga/workerProgress and the work-done progress when
// what a run shows has changed.
func (l *live) progressUpdate(r *liveRun, ef *effects) {
	if !r.verified {
		return
	}
	done, total := l.counts(r)
	p := &workerProgressParams{Story: r.Story, Session: r.Session, State: r.State, Step: r.Step, Cycle: r.Cycle,
		Done: done, Total: total, Message: r.Message, OutputFile: r.OutputFile}
	if r.sent != nil && *r.sent == *p {
		return
	}
	first := r.sent == nil
	moved := first || r.Ended || r.sent.State != p.State
	r.sent = p
	ef.refresh = true
	l.storyMoved(r.Story, moved)
	ef.add(func() { l.notifySaga("saga/workerProgress", p) })
	l.progressStep(ef, r, first, r.Ended, "SAGA "+r.Story, progressText(p), percent(done, total))
}

// percent is a work-done progress's percentage.
func percent(done, total int) uint32 {
	if total <= 0 {
		return 0
	}
	return uint32(done * 100 / total)
}

// runProgress is a followed run's cancellable work-done progress.
type runProgress struct {
	prog       *progress
	token      string
	cancelling bool // a stop asked for by cancelling it is under way
}

// stoppable is a run whose work-done progress stops it when cancelled: a
// worker or an epic runner (work_done_progress_cancel.go).
type stoppable interface {
	progressOf() *runProgress
	// stopper says what cancelling does now; a nil stop once the run is over.
	stopper(root string, env func(string) string) (what string, stop func(context.Context) error)
}

// progressStep adds to ef what a run's work-done progress shows now: begin
// on its first state (unless it ended already), end at its end, else a
// report. Effects run in order on one goroutine, so an end never overtakes
// its begin.
func (l *live) progressStep(ef *effects, run stoppable, first, ending bool, title, text string, pct uint32) {
	rp := run.progressOf()
	switch {
	case first && !ending:
		ef.add(func() {
			l.beginCancellableProgress(title, text, pct, func(pr *progress, token string) {
				rp.prog, rp.token = pr, token
				l.tokens[token] = run
			})
		})
	case ending:
		ef.add(func() {
			l.mu.Lock()
			pr := rp.prog
			rp.prog = nil
			delete(l.tokens, rp.token)
			l.mu.Unlock()
			if pr != nil {
				pr.end(text)
			}
		})
	default:
		ef.add(func() {
			l.mu.Lock()
			pr := rp.prog
			l.mu.Unlock()
			if pr != nil {
				pr.reportPercent(text, pct)
			}
		})
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
