package lsp

import (
	"context"
	"encoding/json"

	"github.com/saga-ai/saga-lsp/commands"
	"go.lsp.dev/protocol"
)

// workDoneProgressCancel is window/workDoneProgress/cancel: cancelling a
// worker's progress stops the worker (commands.StopStory, as `saga-lsp
// stop <story>`); cancelling an epic run's stops the epic (commands.StopEpic,
// as `saga-lsp stop <epic>`).
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
	if !l.started || l.closed {
		l.mu.Unlock()
		return nil
	}
	var stop func(ctx context.Context) error
	var what string
	var done func()
	if r := l.tokens[tok]; r != nil && !r.Ended && !r.cancelling {
		r.cancelling = true
		story, root := r.Story, l.root
		what = "stop " + story
		stop = func(ctx context.Context) error {
			_, err := commands.StopStory(ctx, commands.StopOptions{Root: root, Story: story, Env: l.env})
			return err
		}
		done = func() { r.cancelling = false }
	} else if e := l.epicTokens[tok]; e != nil && e.alive && !e.cancelling {
		e.cancelling = true
		epic, root := e.id, l.root
		what = "stop epic " + epic
		stop = func(ctx context.Context) error {
			_, err := commands.StopEpic(ctx, commands.StopOptions{Root: root, Story: epic, Env: l.env})
			return err
		}
		done = func() { e.cancelling = false }
	}
	if stop == nil {
		l.mu.Unlock()
		return nil
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		s.log.Info("live: progress cancelled", "then", what)
		if err := stop(l.ctx); err != nil && l.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeWarning, "saga-lsp: "+what+": "+err.Error())
		}
		l.mu.Lock()
		done()
		l.mu.Unlock()
	}()
	return nil
}
