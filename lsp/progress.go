package lsp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"
)

// progress is one work-done progress shown by the client; a zero progress
// (the client cannot show them) does nothing.
type progress struct {
	s     *Server
	token protocol.ProgressToken
}

// beginProgress creates a work-done progress when the client supports them.
func (s *Server) beginProgress(title, message string) *progress {
	s.mu.Lock()
	ok := s.client.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return &progress{}
	}
	token := protocol.String(fmt.Sprintf("saga-%d", s.nextToken.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.call(ctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.log.Debug("workDoneProgress/create", "err", err)
		return &progress{}
	}
	p := &progress{s: s, token: token}
	begin := &protocol.WorkDoneProgressBegin{Kind: "begin", Title: title}
	if message != "" {
		begin.Message = &message
	}
	s.notify("$/progress", &protocol.ProgressParams{Token: token, Value: mustRaw(begin)})
	return p
}

func (p *progress) end(message string) {
	if p.s == nil {
		return
	}
	end := &protocol.WorkDoneProgressEnd{Kind: "end"}
	if message != "" {
		end.Message = &message
	}
	p.s.notify("$/progress", &protocol.ProgressParams{Token: p.token, Value: mustRaw(end)})
}

func (s *Server) showMessage(t protocol.MessageType, msg string) {
	s.notify("window/showMessage", &protocol.ShowMessageParams{Type: t, Message: msg})
}

func mustRaw(v any) []byte {
	raw, err := encode(v)
	if err != nil {
		return []byte("null")
	}
	return raw
}

// tokenCounter numbers progress tokens; it lives in the Server.
type tokenCounter = atomic.Int64
