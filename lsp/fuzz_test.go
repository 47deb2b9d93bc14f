package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// The server's own fuzz targets and randomized tests (the process-level
// chaos suite is test/chaos): edits checked against the editor's text
// exactly, and every method with hostile params.

const fuzzRel = ".saga/stories/add-logout-button/write-tests.json"

// fuzzServer is one server for all the inputs of a fuzz target, logging to
// a buffer (a fuzz target may not log through its *testing.F).
func fuzzServer(tb testing.TB) (*client, *testkit.LogBuffer) {
	log := &testkit.LogBuffer{}
	c := startWith(tb, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	c.initialize(testkit.CopyExample(tb, "workspace"), capsFull)
	return c, log
}

// noPanic fails when the server recovered from a panic since the last look.
func noPanic(t testing.TB, log *testkit.LogBuffer, what string) {
	t.Helper()
	if l := log.Take(); strings.Contains(l, "handler panic") {
		t.Fatalf("%s: a handler panicked:\n%s", what, l)
	}
}

// randomEdits applies random edits to a freshly opened buffer and checks
// the server's text is the editor's after each didChange.
func randomEdits(t testing.TB, c *client, log *testkit.LogBuffer, r *rand.Rand, text string, rounds int) {
	t.Helper()
	text = strings.ToValidUTF8(text, "\uFFFD") // what JSON can carry
	c.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(fuzzRel)))
	c.openText(fuzzRel, text, 1)
	for v := 2; v < rounds+2; v++ {
		var changes []string
		for range 1 + r.IntN(3) {
			ch, next, _ := chaos.Edit(r, text)
			changes, text = append(changes, ch), next
		}
		c.didChange(fuzzRel, v, changes...)
		if got, _ := c.serverText(fuzzRel); got != text {
			t.Fatalf("after didChange %s\nserver: %q\neditor: %q", strings.Join(changes, ","), got, text)
		}
	}
	noPanic(t, log, "edits")
}

// FuzzEdits: from any text, random content changes — ranges, whole
// replacements, clamped and refused positions — give exactly the editor's
// text. The fuzz target drives what didChange runs (parseContentChange,
// applyChanges) without a server, so each input is deterministic;
// TestRandomEdits drives the same edits through a server.
func FuzzEdits(f *testing.F) {
	task, err := os.ReadFile(filepath.Join("..", "examples", "workspace", filepath.FromSlash(fuzzRel)))
	if err != nil {
		f.Fatal(err)
	}
	for i, s := range []string{string(task), strings.ReplaceAll(string(task), "\n", "\r\n"), "", "😀\r\re\u0301\n中", "{\r}"} {
		f.Add(s, uint64(i), uint8(8))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, rounds uint8) {
		text = strings.ToValidUTF8(text, "\uFFFD") // what JSON can carry
		r := rand.New(rand.NewPCG(seed, 1))
		for range 1 + rounds%16 {
			var raws []string
			var want string
			refusals := 0
			next := text
			for range 1 + r.IntN(3) {
				ch, after, refused := chaos.Edit(r, next)
				raws, next = append(raws, ch), after
				if refused {
					refusals++
				}
			}
			want = next
			changes := make([]contentChange, len(raws))
			errs := make([]error, len(raws))
			for i, raw := range raws {
				changes[i], errs[i] = parseContentChange(json.RawMessage(raw))
			}
			got, refused := applyChanges([]byte(text), jsonc.NewLineIndex([]byte(text)), changes, errs)
			if string(got) != want || len(refused) != refusals {
				t.Fatalf("changes %s on %q:\ngot  %q (refused %q)\nwant %q (%d refused)", strings.Join(raws, ","), text, got, refused, want, refusals)
			}
			text = want
		}
	})
}

// TestRandomEdits is FuzzEdits in every test run: seeded and bounded.
func TestRandomEdits(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	task, err := os.ReadFile(filepath.Join("..", "examples", "workspace", filepath.FromSlash(fuzzRel)))
	if err != nil {
		t.Fatal(err)
	}
	c, log := fuzzServer(t)
	texts := []string{string(task), strings.ReplaceAll(string(task), "\n", "\r\n"), "", "😀\r\re\u0301\n中"}
	for n := 0; n < len(texts) || time.Now().Before(deadline); n++ {
		randomEdits(t, c, log, r, texts[n%len(texts)], 1+r.IntN(12))
	}
}

// FuzzRequests: every request the server answers, with params mutated from
// well-formed ones or made up, is answered with a result or an error —
// never a panic. The handlers are called on a loaded snapshot directly (a
// request only reads its snapshot), so each input is deterministic; the
// commands, which write files and start processes, are left to
// TestRandomParams and test/chaos.
func FuzzRequests(f *testing.F) {
	task, err := os.ReadFile(filepath.Join("..", "examples", "workspace", filepath.FromSlash(fuzzRel)))
	if err != nil {
		f.Fatal(err)
	}
	c, _ := fuzzServer(f)
	c.openText(fuzzRel, string(task), 1)
	if _, ok := c.serverText(fuzzRel); !ok {
		f.Fatal("the task did not open")
	}
	s := <-c.server
	c.server <- s
	snap := s.current()
	templates := chaos.ParamsTemplates(c.uri(fuzzRel), string(task))
	var methods []string
	for m := range s.methods.requests {
		if _, ok := templates[m]; ok && m != "workspace/executeCommand" {
			methods = append(methods, m)
		}
	}
	slices.Sort(methods)
	r := rand.New(rand.NewPCG(1, 2))
	for i, m := range methods {
		f.Add(uint8(i), templates[m])
		var v any
		_ = json.Unmarshal([]byte(templates[m]), &v)
		f.Add(uint8(i), chaos.Mutate(r, v))
	}
	f.Fuzz(func(t *testing.T, which uint8, params string) {
		method := methods[int(which)%len(methods)]
		h := s.methods.requests[method]
		res := s.safe(method, func() (any, error) { return h(t.Context(), s, snap, json.RawMessage(params)) })
		var re *rpcError
		if errors.As(res.err, &re) && re.code == codeInternalError && strings.HasPrefix(re.msg, "internal error in") {
			t.Fatalf("%s %.300s: %s", method, params, re.msg)
		}
	})
}

// sendParams sends one method with params and checks the server survived.
func sendParams(t testing.TB, c *client, log *testkit.LogBuffer, method, params string) {
	t.Helper()
	if !json.Valid([]byte(params)) {
		params = jsonString(params) // a frame's params must be JSON; any string is
	}
	what := fmt.Sprintf("%s %.200s", method, params)
	if slices.Contains(chaos.Notifications, method) {
		c.notify(method, params)
	} else if m := c.call(method, params); m.Error != nil && strings.HasPrefix(m.Error.Message, "internal error in") {
		t.Fatalf("%s: %s", what, m.Error.Message)
	}
	if m := c.call("workspace/symbol", `{"query":"log"}`); m.Error != nil {
		t.Fatalf("after %s: %+v", what, m.Error)
	}
	noPanic(t, log, what)
}

// TestRandomParams: every method, notifications and commands included,
// with params mutated from well-formed ones through a server: answered,
// survived, never a handler panic. Seeded and bounded.
func TestRandomParams(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	task, err := os.ReadFile(filepath.Join("..", "examples", "workspace", filepath.FromSlash(fuzzRel)))
	if err != nil {
		t.Fatal(err)
	}
	c, log := fuzzServer(t)
	templates := chaos.ParamsTemplates(c.uri(fuzzRel), string(task))
	methods := chaos.Methods(templates)
	for n := 0; n < len(methods) || time.Now().Before(deadline); n++ {
		method := methods[n%len(methods)]
		var v any
		_ = json.Unmarshal([]byte(templates[method]), &v)
		sendParams(t, c, log, method, chaos.Mutate(r, v))
	}
}
