package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// codeAction reads `codeAction <file> <code>[ weak] [only <kind>, …] =>
// [] | <kind> <title> [preferred], …`. It opens the file, waits for the
// diagnostics the server publishes for it and takes the first with code (the
// weakest link of a cycle with weak), then asks for the actions over its
// range with it in the context (and only those kinds). The answer but "Run
// story …" (TestCodeActionRunStory's) must be the actions listed, in order,
// isPreferred where preferred says so, and each quick fix must carry the
// diagnostic it fixes.
func (s *archiveSession) codeAction(t *testing.T, l *wantLine) {
	rel, code := l.word("a file"), l.word("a diagnostic code")
	weak := l.maybe("weak")
	var only []string
	if l.maybe("only") {
		for more := true; more; more = l.maybe(",") {
			only = append(only, l.word("a code action kind"))
		}
	}
	l.arrow()
	type action struct {
		kind, title string
		preferred   bool
	}
	var want []action
	if !l.maybe("[]") {
		for more := true; more; more = l.maybe(",") {
			a := action{kind: l.word("a code action kind"), title: l.literal("a title")}
			a.preferred = l.maybe("preferred")
			want = append(want, a)
		}
	}
	l.end()

	ac := s.clients["default"]
	s.textOn(t, ac, rel)
	d := s.diagnosticToFix(t, ac, rel, code, weak)
	dj, _ := json.Marshal([]diagJSON{d})
	rj, _ := json.Marshal(d.Range)
	ctx := `{"diagnostics":` + string(dj)
	if only != nil {
		oj, _ := json.Marshal(only)
		ctx += `,"only":` + string(oj)
	}
	var got []codeActionJSON
	lineResult(t, s.c, "textDocument/codeAction", fmt.Sprintf(`{"textDocument":{"uri":%q},"range":%s,"context":%s}}`, s.c.uri(rel), rj, ctx), &got)
	if got == nil {
		t.Fatal("codeAction = null, want a list")
	}
	got = slices.DeleteFunc(got, func(a codeActionJSON) bool { return strings.HasPrefix(a.Title, "Run story ") })
	if len(got) != len(want) {
		t.Fatalf("actions %q, want %d", actionTitles(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Kind != w.kind || g.Title != w.title || (g.IsPreferred != nil && *g.IsPreferred) != w.preferred {
			t.Errorf("#%d: %s %q preferred %v, want %s %q %v", i, g.Kind, g.Title, g.IsPreferred != nil && *g.IsPreferred, w.kind, w.title, w.preferred)
		}
		if g.Kind == "quickfix" && (len(g.Diagnostics) != 1 || g.Diagnostics[0].Code != code || g.Diagnostics[0].Range != d.Range) {
			t.Errorf("%q diagnostics = %+v, want the %s diagnostic", g.Title, g.Diagnostics, code)
		}
	}
}

// diagnosticToFix waits for the diagnostics published for rel's buffer on ac
// and returns the first with code (or, weak, the one whose fix is the
// weakest link of a cycle).
func (s *archiveSession) diagnosticToFix(t *testing.T, ac *archiveClient, rel, code string, weak bool) diagJSON {
	t.Helper()
	uri, version := ac.c.uri(rel), ac.version[rel]
	var pd publishedDiagnostics
	_, _, err := ac.c.lc.Next(0, time.Now().Add(20*time.Second), func(m message) bool {
		return m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &pd) == nil &&
			pd.URI == uri && pd.Version != nil && *pd.Version == version
	})
	if err != nil {
		t.Fatalf("no diagnostics for version %d of %s: %v", version, rel, err)
	}
	for _, d := range pd.Diagnostics {
		var fd fixData
		if d.Code == code && (!weak || json.Unmarshal(d.Data, &fd) == nil && fd.Fix != nil && fd.Fix.Weak) {
			return d
		}
	}
	t.Fatalf("no %s diagnostic to fix in %v", code, pd.codes())
	return diagJSON{}
}
