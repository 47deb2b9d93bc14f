package lsp

import (
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestFixTitlesAgree: store.FixTitles (the dashboard's problems page)
// names the quick fixes this server offers for every fixable finding of
// the code-action archives, in the same order.
func TestFixTitlesAgree(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*/*.txtar")
	s := &Server{parser: workspace.Parser(t), log: slog.New(slog.DiscardHandler)}
	ci := clientInfo{documentChanges: true, resourceCreate: true, commandPrefix: "saga."}
	checked := 0
	for _, p := range paths {
		root := archiveWorkspace(t, p)
		ws := workspace.Load(t, root)
		snap := emptySnapshot(root)
		snap.WS = ws
		for _, f := range ws.Files() {
			if f.Doc == nil || f.Kind == store.KindOther || f.Kind == store.KindJournal {
				continue
			}
			ca := &codeActions{s: s, snap: snap, f: f, ci: ci}
			for _, d := range ws.FileDiagnostics(f.Rel) {
				if d.Fix == nil {
					continue
				}
				var got []string
				for _, a := range ca.quickFixes(d, protocol.Diagnostic{}) {
					got = append(got, a.Title)
				}
				want := store.FixTitles(f, d)
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s %s: the server offers %q, FixTitles says %q", p, f.Rel, d.Code, got, want)
				}
				checked++
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d fixable findings checked", checked)
	}
	t.Logf("%d fixable findings", checked)
}
