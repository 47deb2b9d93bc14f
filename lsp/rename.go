package lsp

import (
	"context"
	"encoding/json"
)

func prepareRename(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	return nil, nil
}

func rename(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	return nil, nil
}
