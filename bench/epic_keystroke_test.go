//go:build linux

package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
)

// BenchmarkEpicKeystroke200 is what a keystroke in a 200-story epic's
// epic.json costs the language server's snapshot, on a quiet machine: the
// file parsed again, the workspace updated (store.Workspace.Update) and the
// file's diagnostics. BenchmarkEpic200 measures the same keystroke through
// the server during a run, where the loaded cores stretch this CPU several
// times (docs/architecture.md#an-epic-of-200-stories).
func BenchmarkEpicKeystroke200(b *testing.B) {
	children := randomEpic("big")
	root := epicRepo(b, "big", children, 1)
	p, err := store.NewParser()
	if err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.Open(root, workspace.Options{Parser: p}).Load()
	if err != nil {
		b.Fatal(err)
	}
	rel := ".saga/epics/big/epic.json"
	src, _ := os.ReadFile(filepath.Join(root, rel))
	i := bytes.Index(src, []byte(`"description": "`)) + len(`"description": "`)
	v := int32(1)
	for b.Loop() {
		v++
		t := src // typed, then deleted, in turn
		if v%2 == 1 {
			t = append(append(append([]byte{}, src[:i]...), 'x'), src[i:]...)
		}
		f := p.Parse(rel, t, v)
		ws2, _ := ws.Update([]*store.File{f}, nil)
		if ds := ws2.FileDiagnostics(rel); len(ds) > 0 {
			b.Fatalf("%s has findings: %+v", rel, ds)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "keystroke-ms")
	b.ReportMetric(float64(len(src)), "epic-json-bytes")
}
