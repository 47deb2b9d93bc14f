package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

// workDoneProgressCancel is window/workDoneProgress/cancel: cancelling a
// run's progress stops the run — a worker (control.StopStory, as
// `saga-lsp stop <story>`) or an epic runner and its workers
// (control.StopEpic, as `saga-lsp stop <epic>`). Whether the run still
// lives is read from the watcher's State.
func workDoneProgressCancel(ctx context.Context, s *Server, params json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return invalidParams(err)
	}
	var tok string
	if json.Unmarshal(p.Token, &tok) != nil {
		tok = string(p.Token) // an integer token
	}
	l := s.live
	st := l.state()
	l.mu.Lock()
	rp := l.tokens[tok]
	if rp == nil || !l.started || l.closed || rp.cancelling {
		l.mu.Unlock()
		return nil
	}
	what, stop := rp.target.stopper(st, s.runSetupFor(l.root))
	if stop == nil {
		l.mu.Unlock()
		return nil
	}
	rp.cancelling = true
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		s.log.Info("live: progress cancelled", "then", what)
		if err := stop(l.ctx); err != nil && l.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeWarning, "saga-lsp: "+what+": "+err.Error())
		}
		l.mu.Lock()
		rp.cancelling = false
		l.mu.Unlock()
	}()
	return nil
}
