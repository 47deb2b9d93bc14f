package lsp

import (
	"context"
	"encoding/json"
)

func executeCommand(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	return nil, nil
}

// commandNames lists the executeCommand commands under the client's prefix.
func commandNames(prefix string) []string {
	names := []string{"runStory", "stopStory", "createStory", "createTask", "createEpic", "showPlan"}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
