package lsp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// The completion lines of TestArchives.

// completionAnswer sends a completion request at a place, on the server of
// the current client line, and checks what every answer must be: a list,
// complete, each label once, each item with a textEdit. It returns the list
// (nil for null), the buffer and the byte offset of the place's needle.
func (s *archiveSession) completionAnswer(t *testing.T, p place) (byLabel map[string]complItem, labels []string, text string, base int) {
	t.Helper()
	ac := s.on(s.client)
	text = s.textOn(t, ac, p.rel)
	base = needleAt(t, text, p.needle, p.n)
	m := ac.c.call("textDocument/completion", navParams(ac.c, p.rel, at(t, text, p.needle, p.n, p.off), ""))
	if m.Error != nil {
		t.Fatalf("error %d %s", m.Error.Code, m.Error.Message)
	}
	t.Logf("completion → %s", m.Result)
	if s := strings.TrimSpace(string(m.Result)); s == "null" || s == "" {
		return nil, nil, text, base
	}
	var list complList
	if err := json.Unmarshal(m.Result, &list); err != nil {
		t.Fatalf("want a CompletionList, got %s (%v)", m.Result, err)
	}
	if list.IsIncomplete {
		t.Errorf("isIncomplete = true")
	}
	byLabel = map[string]complItem{}
	for _, it := range list.Items {
		labels = append(labels, it.Label)
		if _, dup := byLabel[it.Label]; dup {
			t.Errorf("label %q offered twice", it.Label)
		}
		byLabel[it.Label] = it
		if it.TextEdit == nil {
			t.Errorf("%q has no textEdit", it.Label)
		}
	}
	return byLabel, labels, text, base
}

// completion reads `completion <place> => null` or
// `completion <place> => offers|exactly <label>, …[; not <label>, …]`.
func (s *archiveSession) completion(t *testing.T, l *wantLine) {
	p := l.place()
	l.arrow()
	null := l.maybe("null")
	var exactly bool
	var want, not []string
	if !null {
		exactly = l.maybe("exactly")
		if !exactly {
			l.keyword("offers") // or exactly, or null
		}
		want = l.list("a label")
		if l.maybe(";") {
			l.keyword("not")
			not = l.list("a label")
		}
	}
	l.end()
	byLabel, labels, _, _ := s.completionAnswer(t, p)
	if null {
		if byLabel != nil {
			t.Fatalf("want null, got %v", labels)
		}
		return
	}
	if byLabel == nil {
		t.Fatal("want a CompletionList, got null")
	}
	for _, w := range want {
		if _, ok := byLabel[w]; !ok {
			t.Errorf("%q not offered; got %v", w, labels)
		}
	}
	if exactly {
		if got, want := slices.Sorted(slices.Values(labels)), slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
			t.Errorf("labels = %v, want exactly %v", got, want)
		}
	}
	for _, n := range not {
		if _, ok := byLabel[n]; ok {
			t.Errorf("%q offered; it must not be", n)
		}
	}
}

// completionItem reads `completion-item <place> <label> => <clause> …`, the
// clauses: newText <text>, range +a..+b (the edit's, in bytes from the start
// of the place's needle), plain | snippet (insertTextFormat), sort <text>,
// detail <text>, filter <text>, comma-after <text> (the one additional edit
// inserts "," right after the first occurrence of text; without it there
// must be none).
func (s *archiveSession) completionItem(t *testing.T, l *wantLine) {
	p := l.place()
	label := l.literal("a label")
	l.arrow()
	var newText, sortText, detail, filter, commaAfter *string
	from, to, format := -1, -1, 0
	for clauses := 0; clauses == 0 || strings.TrimLeft(l.rest, " ") != ""; clauses++ {
		switch c := l.word("a clause"); c {
		case "newText":
			newText = ptr(l.literal("a newText"))
		case "range":
			from, to = l.offsets()
		case "plain":
			format = 1
		case "snippet":
			format = 2
		case "sort":
			sortText = ptr(l.literal("a sortText"))
		case "detail":
			detail = ptr(l.literal("a detail"))
		case "filter":
			filter = ptr(l.literal("a filterText"))
		case "comma-after":
			commaAfter = ptr(l.literal("the text the comma follows"))
		default:
			l.malformed("unknown clause %q", c)
		}
	}
	byLabel, labels, text, base := s.completionAnswer(t, p)
	it, ok := byLabel[label]
	if !ok || it.TextEdit == nil {
		t.Fatalf("%q not offered (or without a textEdit); got %v", label, labels)
	}
	checkField := func(name string, got string, want *string) {
		if want != nil && got != *want {
			t.Errorf("%q %s = %q, want %q", label, name, got, *want)
		}
	}
	checkField("newText", it.TextEdit.NewText, newText)
	checkField("sortText", it.SortText, sortText)
	checkField("detail", it.Detail, detail)
	checkField("filterText", it.FilterText, filter)
	if want := (lspRange{Start: lspclient.PositionAt(text, base+from), End: lspclient.PositionAt(text, base+to)}); from >= 0 && it.TextEdit.Range != want {
		t.Errorf("%q range = %+v, want %+v", label, it.TextEdit.Range, want)
	}
	if format != 0 && it.InsertTextFormat != format {
		t.Errorf("%q insertTextFormat = %d, want %d", label, it.InsertTextFormat, format)
	}
	switch {
	case commaAfter != nil:
		i := strings.Index(text, *commaAfter)
		if i < 0 {
			t.Fatalf("comma-after %q is not in the buffer", *commaAfter)
		}
		pos := lspclient.PositionAt(text, i+len(*commaAfter))
		if e := it.AdditionalTextEdits; len(e) != 1 || e[0].NewText != "," || e[0].Range != (lspRange{Start: pos, End: pos}) {
			t.Errorf("%q additionalTextEdits = %+v, want a comma at %+v", label, e, pos)
		}
	case len(it.AdditionalTextEdits) > 0:
		t.Errorf("%q has unexpected additionalTextEdits %+v", label, it.AdditionalTextEdits)
	}
}
