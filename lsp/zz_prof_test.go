package lsp

import (
	"encoding/json"
	"fmt"

	"github.com/saga-ai/saga-lsp/store"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestZZProf(t *testing.T) {
	root := os.Getenv("ZZROOT")
	if root == "" {
		t.Skip()
	}
	p, _ := store.NewParser()
	ws, _ := p.Load(root)
	want := map[string]bool{}
	for _, d := range ws.Diagnostics() {
		want[d.File] = true
	}
	ws = nil
	c := start(t)
	t0 := time.Now()
	c.onRequest = func(string, json.RawMessage) any { return nil }
	c.initialize(root, `{"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]}}, "window": {"workDoneProgress": true}, "textDocument": {"synchronization": {"didSave": true}, "publishDiagnostics": {"versionSupport": true}}}`)
	t.Logf("loaded in %v", time.Since(t0))
	seen := map[string]bool{}
	from := 0
	for len(seen) < len(want) {
		var m message
		m, from = c.waitFor(from, "textDocument/publishDiagnostics", func(json.RawMessage) bool { return true })
		from++
		var pd publishedDiagnostics
		json.Unmarshal(m.Params, &pd)
		if len(pd.Diagnostics) > 0 {
			seen[pd.URI] = true
		}
	}
	t.Logf("all %d published in %v", len(want), time.Since(t0))
	des, _ := os.ReadDir(filepath.Join(root, ".saga/stories"))
	story := des[len(des)/2].Name()
	files, _ := os.ReadDir(filepath.Join(root, ".saga/stories", story))
	rel := ".saga/stories/" + story + "/" + files[0].Name()
	if files[0].Name() == "story.json" {
		rel = ".saga/stories/" + story + "/" + files[1].Name()
	}
	text := c.open(rel)
	t1 := time.Now()
	n := 300
	var worst time.Duration
	for v := 2; v < n+2; v++ {
		text2 := strings.Replace(text, `"subject": "`, fmt.Sprintf(`"subject": "%d`, v), 1)
		mark := c.mark()
		s := time.Now()
		c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[{"text":%s}]}`, c.uri(rel), v, jsonString(text2)))
		c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == v })
		worst = max(worst, time.Since(s))
	}
	t.Logf("%d keystrokes in %v (%v each), worst %v", n, time.Since(t1), time.Since(t1)/time.Duration(n), worst)
}
