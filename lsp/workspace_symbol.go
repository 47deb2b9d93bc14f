package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
)

// maxWorkspaceSymbols caps a workspace/symbol answer; clients filter and
// re-rank what they get, and a 22,000-file workspace must stay snappy.
const maxWorkspaceSymbols = 500

// workspaceSymbolCheckEvery is how many model items are matched between two
// looks at the request's cancellation.
const workspaceSymbolCheckEvery = 256

// Ranking tiers of a match, best first.
const (
	symbolTierExact       = iota // the id equals the query
	symbolTierPrefix             // id or title starts with the query
	symbolTierSubstring          // id or title contains the query
	symbolTierSubsequence        // the query's characters appear in order
)

// workspaceSymbol answers workspace/symbol: every epic, story and task whose
// id or title (a task's subject) matches the query, case-insensitively, as a
// subsequence. Name is the canonical id, containerName the story (tasks) or
// epic (stories), and the location the id value in the file. Ranked exact
// id, then prefix, then substring, then subsequence matches; within a tier
// epics, stories, then tasks, by name. Capped at maxWorkspaceSymbols. It
// reads only the snapshot's model (no disk) and stops when the request is
// cancelled.
func workspaceSymbol(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.WorkspaceSymbolParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(p.Query))
	var found []symbolCandidate
	n := 0
	consider := func(name, title, container string, kind protocol.SymbolKind, order int, f *store.File) bool {
		n++
		if n%workspaceSymbolCheckEvery == 0 && ctx.Err() != nil {
			return false
		}
		if f == nil {
			return true
		}
		if tier, ok := symbolMatch(q, name, title); ok {
			found = append(found, symbolCandidate{tier: tier, order: order, name: name, container: container, kind: kind, file: f})
		}
		return true
	}
	ws := snap.WS
	for e := range ws.Epics() {
		if !consider(e.ID, e.Title, "", symbolKindEpic, 0, e.File) {
			return nil, ctx.Err()
		}
	}
	for st := range ws.Stories() {
		if !consider(st.ID, st.Title, st.EpicID(), symbolKindStory, 1, st.File) {
			return nil, ctx.Err()
		}
		for _, t := range st.Tasks {
			if !consider(t.ID, t.Subject, st.ID, symbolKindTask, 2, t.File) {
				return nil, ctx.Err()
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	slices.SortFunc(found, compareSymbolCandidates)
	found = found[:min(len(found), maxWorkspaceSymbols)]
	out := make([]protocol.SymbolInformation, 0, len(found))
	for _, c := range found {
		si := protocol.SymbolInformation{
			BaseSymbolInformation: protocol.BaseSymbolInformation{Name: c.name, Kind: c.kind},
			Location:              snap.fileLocation(c.file),
		}
		if c.container != "" {
			si.ContainerName = new(c.container)
		}
		out = append(out, si)
	}
	return out, nil
}

// symbolCandidate is a matched model item waiting to be ranked.
type symbolCandidate struct {
	tier, order     int
	name, container string
	kind            protocol.SymbolKind
	file            *store.File
}

// compareSymbolCandidates orders by tier, kind (epics, stories, tasks),
// name, container and path; it returns at the first difference.
func compareSymbolCandidates(a, b symbolCandidate) int {
	if c := cmp.Compare(a.tier, b.tier); c != 0 {
		return c
	}
	if c := cmp.Compare(a.order, b.order); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	if c := strings.Compare(a.container, b.container); c != 0 {
		return c
	}
	return strings.Compare(a.file.Rel, b.file.Rel)
}

// symbolMatch matches a lowercased query against an id and a title, and
// says how well (the best tier of the two). The empty query matches all.
func symbolMatch(q, id, title string) (int, bool) {
	if q == "" {
		return symbolTierPrefix, true
	}
	lid := strings.ToLower(id)
	if lid == q {
		return symbolTierExact, true
	}
	ltitle := strings.ToLower(title)
	switch {
	case strings.HasPrefix(lid, q) || strings.HasPrefix(ltitle, q):
		return symbolTierPrefix, true
	case strings.Contains(lid, q) || strings.Contains(ltitle, q):
		return symbolTierSubstring, true
	case symbolSubsequence(q, lid) || symbolSubsequence(q, ltitle):
		return symbolTierSubsequence, true
	}
	return 0, false
}

// symbolSubsequence reports whether q's runes appear in s in order.
func symbolSubsequence(q, s string) bool {
	if len(q) > len(s) {
		return false
	}
	for _, r := range s {
		if q == "" {
			return true
		}
		qr, size := utf8.DecodeRuneInString(q)
		if r == qr {
			q = q[size:]
		}
	}
	return q == ""
}
