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
// informational one (cmd ""), or one running saga.<cmd> with arguments
// [{"story": story}] ([{"epic": story}] for the epic commands).
type wantLens struct {
	needle string
	n      int
	title  string
	cmd    string
	story  string
}

// runLens is the "▶ Run story" lens of a story.json.
func runLens(needle, story string) wantLens {
	return wantLens{needle: needle, title: "▶ Run story", cmd: "runStory", story: story}
}

// shopEpicLenses are the shop epic's lenses: ▶ Run epic and the stories
// done on its id; per child entry, its run state in the epic (ready: no
// blocker; waiting: behind shop--cart; the tasks done so far, cartDone of
// shop--cart's) and ▶ Run (none for a missing story).
func shopEpicLenses(cartDone int) []wantLens {
	return []wantLens{
		{`"shop"`, 0, "▶ Run epic", "runEpic", "shop"},
		{`"shop"`, 0, "0/3 stories done", "", ""},
		{`"shop--cart"`, 0, fmt.Sprintf("○ ready · %d/5 tasks", cartDone), "", ""},
		{`"shop--cart"`, 0, "▶ Run", "runStory", "shop--cart"},
		{`"shop--checkout"`, 0, "○ waiting · 1/4 tasks", "", ""},
		{`"shop--checkout"`, 0, "▶ Run", "runStory", "shop--checkout"},
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
			// Action lenses: one of our commands, with [{"story": …}].
			args, _ := json.Marshal(g.Command.Arguments)
			key := "story"
			if strings.HasSuffix(w.cmd, "Epic") {
				key = "epic"
			}
			wantArgs := fmt.Sprintf(`[{%q:%q}]`, key, w.story)
			if g.Command.Title != w.title || id != "saga."+w.cmd || string(args) != wantArgs {
				t.Errorf("%s #%d: title %q id %q arguments %s, want title %q, id saga.%s, arguments %s", rel, i, g.Command.Title, id, args, w.title, w.cmd, wantArgs)
			}
		} else if g.Command.Title != w.title || g.Command.Command == nil || *g.Command.Command != "" || g.Command.Arguments != nil {
			// Informational lenses: a title and an empty command id, which
			// VS Code shows as plain text.
			t.Errorf("%s #%d: title %q id %q arguments %v, want title %q and an empty id", rel, i, g.Command.Title, id, g.Command.Arguments, w.title)
		}
		var r lspRange
		if w.needle == "{" {
			r = lspRange{End: lspPosition{Character: 1}}
		} else {
			r = spanOf(t, text, w.needle, w.n)
		}
		if g.Range != r {
			t.Errorf("%s #%d (%s): range %+v, want %+v", rel, i, w.title, g.Range, r)
		}
	}
}

func TestCodeLens(t *testing.T) {
	c := symbolFixture(t, "shop", "")
	tests := []struct {
		rel  string
		want []wantLens
	}{
		// Stories: done/total and the status the tasks give.
		{".saga/stories/shop--cart/story.json", []wantLens{runLens(`"shop--cart"`, "shop--cart"), {`"shop--cart"`, 0, "1/5 tasks done · status: in_progress", "", ""}}},
		{".saga/stories/shop--checkout/story.json", []wantLens{runLens(`"shop--checkout"`, "shop--checkout"), {`"shop--checkout"`, 0, "1/4 tasks done · status: in_progress", "", ""}}},
		{".saga/stories/fix-login-typo/story.json", []wantLens{runLens(`"fix-login-typo"`, "fix-login-typo"), {`"fix-login-typo"`, 0, "0/1 tasks done · status: pending", "", ""}}},
		// Tasks: status and wave n/m of the story's plan.
		{".saga/stories/shop--cart/add-item.json", []wantLens{{`"add-item"`, 0, "status: completed", "", ""}}},
		{".saga/stories/shop--cart/remove-item.json", []wantLens{{`"remove-item"`, 0, "status: pending · wave 1/3", "", ""}}},
		{".saga/stories/shop--cart/persist-cart.json", []wantLens{{`"persist-cart"`, 0, "status: in_progress · wave 1/3", "", ""}}},
		{".saga/stories/shop--cart/cart-total.json", []wantLens{{`"cart-total"`, 0, "status: pending · wave 2/3", "", ""}}},
		{".saga/stories/shop--cart/cart-badge.json", []wantLens{{`"cart-badge"`, 0, "status: pending · wave 3/3", "", ""}}},
		{".saga/stories/fix-login-typo/correct-label.json", []wantLens{{`"correct-label"`, 0, "status: pending · wave 1/1", "", ""}}},
		// Cycles: members are blocked by the cycle, dependents behind it.
		// pay-button has a non-BMP character before its id on the same line.
		{".saga/stories/shop--checkout/pay-button.json", []wantLens{{`"pay-button"`, 0, "status: pending · blocked (cycle)", "", ""}}},
		{".saga/stories/shop--checkout/confirm-order.json", []wantLens{{`"confirm-order"`, 0, "status: pending · blocked (cycle)", "", ""}}},
		{".saga/stories/shop--checkout/send-receipt.json", []wantLens{{`"send-receipt"`, 0, "status: pending · blocked (behind a cycle)", "", ""}}},
		{".saga/stories/shop--checkout/address-form.json", []wantLens{{`"address-form"`, 0, "status: completed", "", ""}}},
		{".saga/epics/shop/epic.json", shopEpicLenses(1)},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			checkLenses(t, tc.rel, c.symbolReadRel(tc.rel), codeLenses(c, tc.rel), tc.want)
		})
	}
	// Files that are not stories, tasks or epics have none: [] not null.
	m := c.call("textDocument/codeLens", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri("notes.json")))
	if m.Error != nil || string(m.Result) != "[]" {
		t.Errorf("non-SAGA file: %s %+v", m.Result, m.Error)
	}
}

// Lenses follow the editor buffers: completing a task moves the story's
// count and the waves of the other tasks; a new cycle blocks its members.
func TestCodeLensAfterEdit(t *testing.T) {
	c := symbolFixture(t, "shop", "")
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
				body = c.symbolReadRel(r)
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

// A new, unsaved task without an id gets its lens on the opening brace; the
// story counts it. Missing required properties make it a broken file, which
// no plan schedules until it is fixed.
func TestCodeLensNewTaskWithoutID(t *testing.T) {
	c := symbolFixture(t, "shop", "")
	rel := ".saga/stories/shop--cart/apply-coupon.json"
	text := "{\n  \"subject\": \"Apply a coupon\",\n  \"status\": \"pending\",\n  \"blockedBy\": [\"cart-badge\"]\n}\n"
	c.openText(rel, text, 1)
	checkLenses(t, rel, text, codeLenses(c, rel), []wantLens{{"{", 0, "status: pending · not planned (broken file)", "", ""}})
	story := ".saga/stories/shop--cart/story.json"
	checkLenses(t, story, c.symbolReadRel(story), codeLenses(c, story), []wantLens{runLens(`"shop--cart"`, "shop--cart"), {`"shop--cart"`, 0, "1/6 tasks done · status: in_progress", "", ""}})
}
