//go:build linux

package bench

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/bench/workload"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// BenchmarkLongList is issue 17's hostile file: a task whose blockedBy
// holds 60,000 entries (about 600 KB, one per line), open in the server.
// Each op asks every request once — hover, completion, definition,
// references, rename, symbols, code actions over the whole file, code lens
// — and types one edit, timed to its diagnostics. The budget: every
// request within 1 s (slowest-ms). Nothing may be quadratic in the list's
// length: the same round on a list four times shorter (15,000 entries),
// measured in the same op, gives growth-x4, the slowest request's ratio
// between the two sizes (4 when linear, 16 when quadratic).
func BenchmarkLongList(b *testing.B) {
	bin := builtBinary(b)
	long := newLongSession(b, bin, 60000)
	defer long.c.stop()
	short := newLongSession(b, bin, 15000)
	defer short.c.stop()
	var slowest, slowestShort, growth []float64
	perMethod := map[string][]float64{}
	for b.Loop() {
		lat := long.round(b)
		latShort := short.round(b)
		s, ss := slices.Max(slices.Collect(maps.Values(lat))), slices.Max(slices.Collect(maps.Values(latShort)))
		slowest, slowestShort, growth = append(slowest, s), append(slowestShort, ss), append(growth, s/ss)
		for m, v := range lat {
			perMethod[m] = append(perMethod[m], v)
		}
	}
	b.ReportMetric(median(slowest), "slowest-ms")
	b.ReportMetric(median(slowestShort), "slowest-15k-ms")
	b.ReportMetric(median(growth), "growth-x4")
	for _, m := range slices.Sorted(maps.Keys(perMethod)) {
		b.ReportMetric(median(perMethod[m]), m+"-ms")
	}
}

// longSession is a server with the long-list file open.
type longSession struct {
	c       *lspProc
	path    string
	text    string
	n       int // entries
	version int
}

func newLongSession(b *testing.B, bin string, entries int) *longSession {
	b.Helper()
	root := b.TempDir()
	text, err := workload.LongList(root, entries, workload.LongLines)
	if err != nil {
		b.Fatal(err)
	}
	s := &longSession{c: startSaga(b, bin), path: filepath.Join(root, filepath.FromSlash(workload.LongTaskRel)), text: text, n: entries, version: 1}
	if _, err := s.c.Call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": lspclient.FileURI(root), "capabilities": sagaCapabilities}, lspTimeout); err != nil {
		b.Fatal(err)
	}
	if err := s.c.Notify("initialized", struct{}{}); err != nil {
		b.Fatal(err)
	}
	s.waitNote(b, func(m lspclient.Message) bool {
		return m.Method == "window/logMessage" && strings.Contains(string(m.Params), "saga-lsp: loaded")
	})
	if err := s.c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lspclient.FileURI(s.path), "languageId": "json", "version": 1, "text": text}}); err != nil {
		b.Fatal(err)
	}
	s.waitDiagnostics(b, 1)
	return s
}

// waitNote waits for a notification matching pred.
func (s *longSession) waitNote(b *testing.B, pred func(lspclient.Message) bool) lspclient.Message {
	b.Helper()
	deadline := time.Now().Add(lspTimeout)
	for {
		m, err := s.c.next(deadline)
		if err != nil {
			b.Fatal(err)
		}
		if pred(m) {
			return m
		}
	}
}

// waitDiagnostics waits for the long file's publication at version.
func (s *longSession) waitDiagnostics(b *testing.B, version int) lspclient.Message {
	b.Helper()
	return s.waitNote(b, func(m lspclient.Message) bool {
		var p publication
		return m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &p) == nil &&
			lspclient.URIPath(p.URI) == s.path && p.Version != nil && *p.Version == version
	})
}

// round asks every request once and types one edit; it returns each one's
// latency in milliseconds.
func (s *longSession) round(b *testing.B) map[string]float64 {
	b.Helper()
	mid := strings.Index(s.text, `"`+workload.LongEntry(s.n/2+1)+`"`) + 2 // inside a sibling's name
	pos, idPos := lspclient.PositionAt(s.text, mid), lspclient.PositionAt(s.text, strings.Index(s.text, `"huge"`)+2)
	doc := map[string]any{"uri": lspclient.FileURI(s.path)}
	at := func(p lspclient.Position) map[string]any { return map[string]any{"textDocument": doc, "position": p} }
	with := func(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }
	whole := map[string]any{"start": lspclient.Position{}, "end": lspclient.Position{Line: strings.Count(s.text, "\n") + 1}}
	requests := []struct {
		name   string
		method string
		params any
	}{
		{"hover", "textDocument/hover", at(pos)},
		{"hover-id", "textDocument/hover", at(idPos)},
		{"completion", "textDocument/completion", at(pos)},
		{"definition", "textDocument/definition", at(pos)},
		{"references", "textDocument/references", with(at(pos), "context", map[string]bool{"includeDeclaration": true})},
		{"rename", "textDocument/rename", with(at(pos), "newName", "renamed")},
		{"documentSymbol", "textDocument/documentSymbol", map[string]any{"textDocument": doc}},
		{"workspaceSymbol", "workspace/symbol", map[string]any{"query": "huge"}},
		{"codeAction", "textDocument/codeAction", map[string]any{"textDocument": doc, "range": whole, "context": map[string]any{"diagnostics": []any{}}}},
		{"codeLens", "textDocument/codeLens", map[string]any{"textDocument": doc}},
	}
	lat := map[string]float64{}
	for _, r := range requests {
		t0 := time.Now()
		if _, err := s.c.Call(r.method, r.params, lspTimeout); err != nil {
			b.Fatalf("%d entries: %s: %v", s.n, r.name, err)
		}
		lat[r.name] = float64(time.Since(t0).Microseconds()) / 1e3
	}
	// One keystroke in the list: a character in, or out again.
	s.version++
	var change map[string]any
	if s.version%2 == 0 {
		change = map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": "x"}
	} else {
		end := lspclient.Position{Line: pos.Line, Character: pos.Character + 1}
		change = map[string]any{"range": map[string]any{"start": pos, "end": end}, "text": ""}
	}
	s.c.drain()
	t0 := time.Now()
	if err := s.c.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": lspclient.FileURI(s.path), "version": s.version}, "contentChanges": []any{change}}); err != nil {
		b.Fatal(err)
	}
	s.waitDiagnostics(b, s.version)
	lat["edit-diagnostics"] = float64(time.Since(t0).Microseconds()) / 1e3
	if s.version%2 == 0 {
		s.text = s.text[:mid] + "x" + s.text[mid:]
	} else {
		s.text = s.text[:mid] + s.text[mid+1:]
	}
	return lat
}
