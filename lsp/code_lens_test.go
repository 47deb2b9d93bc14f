package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type gotCodeLens struct {
	Range   lspRange `json:"range"`
	Command *struct {
		Title     string  `json:"title"`
		Command   *string `json:"command"`
		Arguments []any   `json:"arguments"`
	} `json:"command"`
}

// wantLens is a lens expected on the n-th occurrence of needle: an
// informational one (cmd ""), or one running the command cmd with arguments
// args (JSON).
type wantLens struct {
	needle    string
	n         int
	title     string
	cmd, args string
}

// runLens is the "▶ Run story" lens of a story.json.
func runLens(needle, story string) wantLens {
	return wantLens{needle: needle, title: "▶ Run story", cmd: "saga.runStory", args: fmt.Sprintf(`[{"story":%q}]`, story)}
}

// shopEpicLenses are the shop epic's lenses: ▶ Run epic and the stories
// done on its id; per child entry, its run state in the epic (ready: no
// blocker; waiting: behind shop--cart; the tasks done so far, cartDone of
// shop--cart's) and ▶ Run (none for a missing story).
func shopEpicLenses(cartDone int) []wantLens {
	return []wantLens{
		{`"shop"`, 0, "▶ Run epic", "saga.runEpic", `[{"epic":"shop"}]`},
		{`"shop"`, 0, "0/3 stories done", "", ""},
		{`"shop--cart"`, 0, fmt.Sprintf("○ ready · %d/5 tasks", cartDone), "", ""},
		{`"shop--cart"`, 0, "▶ Run", "saga.runStory", `[{"story":"shop--cart"}]`},
		{`"shop--checkout"`, 0, "○ waiting · 1/4 tasks", "", ""},
		{`"shop--checkout"`, 0, "▶ Run", "saga.runStory", `[{"story":"shop--checkout"}]`},
		{`"shop--ghost"`, 0, "no such story", "", ""},
	}
}

func codeLenses(c *client, rel string) []gotCodeLens {
	c.t.Helper()
	var got []gotCodeLens
	c.result("textDocument/codeLens", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)), &got)
	return got
}

// checkLenses compares lenses with what is expected, ranges included; text
// is the file's content as the server sees it.
func checkLenses(t *testing.T, rel, text string, got []gotCodeLens, want []wantLens) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d lenses %+v, want %d", rel, len(got), got, len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		if g.Command == nil {
			t.Errorf("%s #%d: no command", rel, i)
			continue
		}
		id := "<absent>"
		if g.Command.Command != nil {
			id = *g.Command.Command
		}
		if w.cmd != "" {
			// Action lenses: one of our commands, with its arguments.
			args, _ := json.Marshal(g.Command.Arguments)
			if g.Command.Title != w.title || id != w.cmd || string(args) != w.args {
				t.Errorf("%s #%d: title %q id %q arguments %s, want title %q, id %s, arguments %s", rel, i, g.Command.Title, id, args, w.title, w.cmd, w.args)
			}
		} else if g.Command.Title != w.title || g.Command.Command == nil || *g.Command.Command != "" || g.Command.Arguments != nil {
			// Informational lenses: a title and an empty command id, which
			// VS Code shows as plain text.
			t.Errorf("%s #%d: title %q id %q arguments %v, want title %q and an empty id", rel, i, g.Command.Title, id, g.Command.Arguments, w.title)
		}
		if r := spanOf(t, text, w.needle, w.n); g.Range != r {
			t.Errorf("%s #%d (%s): range %+v, want %+v", rel, i, w.title, g.Range, r)
		}
	}
}

// Lenses follow the editor buffers: completing a task moves the story's
// count and the waves of the other tasks; a new cycle blocks its members.
func TestCodeLensAfterEdit(t *testing.T) {
	c := shopFixture(t, "")
	rel := ".saga/stories/shop--cart/remove-item.json"
	text := c.open(rel)
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":{"start":%s,"end":%s},"text":"completed"}]}`,
		c.uri(rel), at(t, text, `"pending"`, 0, 1), at(t, text, `"pending"`, 0, len(`"pending`))))
	text = strings.Replace(text, `"pending"`, `"completed"`, 1)

	expect := func(step string, cases map[string][]wantLens, texts map[string]string) {
		t.Helper()
		for r, want := range cases {
			body, ok := texts[r]
			if !ok {
				body = navDisk(t, c, r)
			}
			checkLenses(t, step+": "+r, body, codeLenses(c, r), want)
		}
	}
	expect("completed remove-item", map[string][]wantLens{
		".saga/stories/shop--cart/story.json":        {runLens(`"shop--cart"`, "shop--cart"), {`"shop--cart"`, 0, "2/5 tasks done · status: in_progress", "", ""}},
		".saga/stories/shop--cart/remove-item.json":  {{`"remove-item"`, 0, "status: completed", "", ""}},
		".saga/stories/shop--cart/persist-cart.json": {{`"persist-cart"`, 0, "status: in_progress · wave 1/2", "", ""}},
		".saga/stories/shop--cart/cart-total.json":   {{`"cart-total"`, 0, "status: pending · wave 1/2", "", ""}},
		".saga/stories/shop--cart/cart-badge.json":   {{`"cart-badge"`, 0, "status: pending · wave 2/2", "", ""}},
		".saga/epics/shop/epic.json":                 shopEpicLenses(2),
	}, map[string]string{rel: text})

	// Make persist-cart wait on cart-badge, and cart-total on persist-cart:
	// cart-total → persist-cart → cart-badge → cart-total is a cycle.
	prel := ".saga/stories/shop--cart/persist-cart.json"
	ptext := c.open(prel)
	ptext2 := strings.Replace(ptext, `"blockedBy": []`, `"blockedBy": ["cart-badge"]`, 1)
	c.didChange(prel, 2, wholeText(ptext2))
	trel := ".saga/stories/shop--cart/cart-total.json"
	ttext := c.open(trel)
	ttext2 := strings.Replace(ttext, `["add-item", "remove-item"]`, `["add-item", "remove-item", "persist-cart"]`, 1)
	c.didChange(trel, 2, wholeText(ttext2))
	expect("cycle", map[string][]wantLens{
		prel: {{`"persist-cart"`, 0, "status: in_progress · blocked (cycle)", "", ""}},
		trel: {{`"cart-total"`, 0, "status: pending · blocked (cycle)", "", ""}},
		".saga/stories/shop--cart/cart-badge.json":  {{`"cart-badge"`, 0, "status: pending · blocked (cycle)", "", ""}},
		".saga/stories/shop--cart/story.json":       {runLens(`"shop--cart"`, "shop--cart"), {`"shop--cart"`, 0, "2/5 tasks done · status: in_progress", "", ""}},
		".saga/stories/shop--cart/remove-item.json": {{`"remove-item"`, 0, "status: completed", "", ""}},
	}, map[string]string{prel: ptext2, trel: ttext2, rel: text})
}
