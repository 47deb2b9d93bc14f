package lsp

import (
	"context"
	"encoding/json"

	"github.com/saga-ai/saga-lsp/commands"
	"go.lsp.dev/protocol"
)

// workDoneProgressCancel is window/workDoneProgress/cancel: cancelling a worker's
// progress stops the worker (commands.StopStory, as `saga-lsp stop`).
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
	l.mu.Lock()
	r := l.tokens[tok]
	if r == nil || r.Ended || r.cancelling {
		l.mu.Unlock()
		return nil
	}
	r.cancelling = true
	story, root := r.Story, l.root
	if !l.started || l.closed {
		l.mu.Unlock()
		return nil
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		s.log.Info("live: progress cancelled; stopping the worker", "story", story)
		if _, err := commands.StopStory(l.ctx, commands.StopOptions{Root: root, Story: story, Env: l.env}); err != nil && l.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeWarning, "saga-lsp: stop "+story+": "+err.Error())
		}
		l.mu.Lock()
		r.cancelling = false
		l.mu.Unlock()
	}()
	return nil
}
