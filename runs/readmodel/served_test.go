//go:build unix

package readmodel_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// TestServedViewPublished: a published view answers callers at once, with
// no loop reading the requests, in the form each asks; withdrawn, callers
// wait for the loop's answer again; a closed server answers nothing, its
// last view included (docs/architecture.md#status-asks-the-live-runner).
func TestServedViewPublished(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	s, err := readmodel.ServeEpicState(dir, root, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := readmodel.EpicQuery{Root: root, Epic: "shop", SessionDir: dir}
	if s.Wanted() {
		t.Error("wanted before anybody asked")
	}

	st := &readmodel.EpicStatus{ID: "shop", State: readmodel.EpicRunning, Running: []string{"shop--a"}, AwaitingMerge: []string{},
		Stories: []readmodel.EpicStory{{ID: "shop--a", State: readmodel.EpicRunning, Done: 1, Total: 2, BlockedBy: []string{}, HeldBy: []string{}, Conflicts: []string{}}}}
	var text, js bytes.Buffer
	if err := st.WriteText(&text, "The shop"); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	s.Publish("The shop", st)
	st.Stories[0].Done = 2 // the caller's later change is not what was published
	if got, ok := readmodel.AskRunner(t.Context(), q, false); !ok || string(got) != text.String() {
		t.Errorf("text from the published view: %v\n%s\nwant:\n%s", ok, got, text.String())
	}
	if got, ok := readmodel.AskRunner(t.Context(), q, true); !ok || string(got) != js.String() {
		t.Errorf("JSON from the published view: %v\n%s\nwant:\n%s", ok, got, js.String())
	}
	if !s.Wanted() {
		t.Error("not wanted just after callers asked")
	}

	s.Publish("", nil) // withdrawn: the loop answers, here with nothing
	answered := make(chan bool, 1)
	go func() {
		_, ok := readmodel.AskRunner(t.Context(), q, false)
		answered <- ok
	}()
	s.Answer(<-s.Requests(), "", nil)
	if <-answered {
		t.Error("answered from a withdrawn view")
	}

	s.Publish("The shop", st)
	s.Close()
	if _, ok := readmodel.AskRunner(t.Context(), q, false); ok {
		t.Error("a closed server answered")
	}
}
