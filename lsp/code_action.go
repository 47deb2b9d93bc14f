package lsp

import (
	"context"
	"encoding/json"
)

func codeAction(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	return nil, nil
}
