package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// The fixture (testdata/completion):
//
//	story pipeline: fetch-data ← load-data ← clean-data ← report (each blocked
//	by the one before), and lint, blocked by nothing;
//	epic shop: shop--cart ← shop--checkout ← shop--pay, and shop--search;
//	story folders shop--refunds (in no epic's children) and pipeline;
//	epic billing (single-file dialect), no children;
//	notes.json at the root: not a .saga file.

type complItem struct {
	Label            string          `json:"label"`
	Kind             int             `json:"kind"`
	Detail           string          `json:"detail"`
	Documentation    json.RawMessage `json:"documentation"`
	SortText         string          `json:"sortText"`
	FilterText       string          `json:"filterText"`
	InsertTextFormat int             `json:"insertTextFormat"`
	TextEdit         *struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	} `json:"textEdit"`
	AdditionalTextEdits []struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	} `json:"additionalTextEdits"`
}

type complList struct {
	IsIncomplete bool        `json:"isIncomplete"`
	Items        []complItem `json:"items"`
}

// complCheck pins one item down.
type complCheck struct {
	label    string
	newText  string
	from, to int // the edit's range, in bytes from the start of the case's needle (unchecked when to is 0)
	format   int // insertTextFormat: 1 plain, 2 snippet; 0 unchecked
	sortText string
	detail   string
	// commaAfter: the item inserts a missing "," right after the first
	// occurrence of this text ("" = no additional edit expected).
	commaAfter string
	filter     string // expected filterText ("" = unchecked)
}

type complCase struct {
	name string
	file string
	// text is the buffer; when empty, the file's disk content with the
	// first occurrence of replace[0] replaced by replace[1].
	text    string
	empty   bool // the buffer is empty
	replace [2]string
	// The cursor: off bytes into the n-th occurrence of needle.
	needle   string
	n, off   int
	snippets bool
	null     bool     // the answer must be null
	want     []string // labels that must be offered
	only     bool     // … and nothing else
	not      []string // labels that must not be offered
	checks   []complCheck
}

const snippetCaps = `{"textDocument":{"completion":{"completionItem":{"snippetSupport":true}}}}`

func TestCompletion(t *testing.T) {
	const (
		pipeline = ".saga/stories/pipeline/"
		epic     = ".saga/epics/shop/epic.json"
	)
	taskProps := []string{"id", "subject", "description", "status", "blockedBy", "activeForm", "guidance", "doneWhen", "priority", "checks", "checkTimeout"}
	cases := []complCase{
		// --- blockedBy ---
		{
			name: "blockedBy inside a string", file: pipeline + "clean-data.json",
			replace: [2]string{`["load-data"]`, `["load-data", "f"]`},
			needle:  `"f"`, off: 2,
			want: []string{"fetch-data", "lint"}, only: true,
			not: []string{"clean-data", "load-data", "report"},
			checks: []complCheck{{label: "fetch-data", newText: `"fetch-data"`, from: 0, to: 3, format: 1,
				detail: "Fetch the data", filter: `"fetch-data"`}},
		},
		{
			name: "blockedBy empty array", file: pipeline + "clean-data.json",
			replace: [2]string{`["load-data"]`, `[]`},
			needle:  `[]`, off: 1,
			want: []string{"fetch-data", "load-data", "lint"}, only: true,
			checks: []complCheck{{label: "load-data", newText: `"load-data"`, from: 1, to: 1}},
		},
		{
			name: "blockedBy after a comma", file: pipeline + "clean-data.json",
			replace: [2]string{`["load-data"]`, `["load-data", ]`},
			needle:  `, ]`, off: 2,
			want: []string{"fetch-data", "lint"}, only: true,
			checks: []complCheck{{label: "lint", newText: `"lint"`, from: 2, to: 2}},
		},
		{
			name: "blockedBy before an element gets a comma", file: pipeline + "clean-data.json",
			replace: [2]string{`["load-data"]`, `[ "load-data"]`},
			needle:  `[ "`, off: 1,
			want: []string{"fetch-data", "lint"}, only: true,
			checks: []complCheck{{label: "lint", newText: `"lint", `, from: 1, to: 1}},
		},
		{
			name:   "blockedBy unterminated string, no closing bracket",
			file:   pipeline + "clean-data.json",
			text:   "{\n  \"id\": \"clean-data\",\n  \"blockedBy\": [\"lo\n  \"subject\": \"Clean the data\",\n  \"status\": \"pending\"\n}\n",
			needle: `["lo`, off: 4,
			want: []string{"fetch-data", "load-data", "lint"}, only: true,
			checks: []complCheck{{label: "load-data", newText: `"load-data"`, from: 1, to: 4, filter: `"load-data"`}},
		},
		{
			name:   "blockedBy open bracket at the end of a line",
			file:   pipeline + "clean-data.json",
			text:   "{\n  \"id\": \"clean-data\",\n  \"blockedBy\": [\n  \"subject\": \"Clean the data\"\n}\n",
			needle: `[`, off: 1,
			want: []string{"fetch-data", "load-data", "lint"}, only: true,
			// The key swallowed by the unclosed array is no element: no comma.
			checks: []complCheck{{label: "lint", newText: `"lint"`, from: 1, to: 1}},
		},
		{
			name: "blockedBy without a value yet gets an array", file: pipeline + "clean-data.json",
			replace: [2]string{`"blockedBy": ["load-data"]`, `"blockedBy": `},
			needle:  `"blockedBy": `, off: len(`"blockedBy": `),
			want: []string{"fetch-data", "load-data", "lint"}, only: true,
			checks: []complCheck{{label: "lint", newText: `["lint"]`, from: len(`"blockedBy": `), to: len(`"blockedBy": `)}},
		},
		{
			name: "blockedBy excludes what would close a cycle", file: pipeline + "fetch-data.json",
			needle: `[]`, off: 1,
			// load-data, clean-data and report are all (transitively) blocked by fetch-data.
			want: []string{"lint"}, only: true,
			not: []string{"fetch-data", "load-data", "clean-data", "report"},
		},
		{
			name: "blockedBy cycle exclusion in the middle of a chain", file: pipeline + "load-data.json",
			replace: [2]string{`["fetch-data"]`, `["fetch-data", ""]`},
			needle:  `""`, off: 1,
			// clean-data and report depend on load-data; fetch-data is listed.
			want: []string{"lint"}, only: true,
		},
		{
			name: "blockedBy never offers the task itself", file: pipeline + "lint.json",
			needle: `[]`, off: 1,
			want: []string{"clean-data", "fetch-data", "load-data", "report"}, only: true,
			not: []string{"lint"},
		},
		{
			name: "blockedBy after a complete string: nothing", file: pipeline + "clean-data.json",
			needle: `"load-data"`, off: len(`"load-data"`),
			null: true,
		},
		// --- epic ---
		{
			name: "epic children id", file: epic,
			replace: [2]string{`{"id": "shop--search", "blockedBy": []}`, `{"id": "shop--search", "blockedBy": []},
    {"id": "", "blockedBy": []}`},
			needle: `"id": ""`, off: len(`"id": "`),
			want: []string{"shop--refunds", "pipeline"}, only: true,
			checks: []complCheck{
				{label: "shop--refunds", newText: `"shop--refunds"`, from: 6, to: 8, sortText: "0_shop--refunds", detail: "Refunds"},
				{label: "pipeline", sortText: "1_pipeline"},
			},
		},
		{
			name: "epic children id being retyped", file: epic,
			replace: [2]string{`"shop--search", "blockedBy"`, `"shop--s", "blockedBy"`},
			needle:  `"shop--s"`, off: 7,
			// shop--search is the entry being typed: offered again.
			want: []string{"shop--refunds", "shop--search", "pipeline"}, only: true,
			checks: []complCheck{{label: "shop--search", newText: `"shop--search"`, from: 0, to: 9}},
		},
		{
			name: "epic children blockedBy excludes cycles", file: epic,
			needle: `"blockedBy": []`, off: len(`"blockedBy": [`),
			// shop--cart: checkout and pay depend on it.
			want: []string{"shop--search"}, only: true,
			not:    []string{"shop--cart", "shop--checkout", "shop--pay"},
			checks: []complCheck{{label: "shop--search", newText: `"shop--search"`, from: 14, to: 14, detail: "Product search"}},
		},
		{
			name: "epic children blockedBy excludes listed and self", file: epic,
			replace: [2]string{`["shop--checkout"]`, `["shop--checkout", "s"]`},
			needle:  `"s"]`, off: 2,
			want: []string{"shop--cart", "shop--search"}, only: true,
		},
		{
			name: "epic child property names", file: epic,
			replace: [2]string{`{"id": "shop--search", "blockedBy": []}`, `{"id": "shop--search", }`},
			needle:  `"shop--search", }`, off: len(`"shop--search", `),
			want: []string{"blockedBy"}, only: true,
			checks: []complCheck{{label: "blockedBy", newText: `"blockedBy": `, format: 1, sortText: "0_blockedBy"}},
		},
		{
			name: "epic new child object property names", file: epic, snippets: true,
			replace: [2]string{`{"id": "shop--search", "blockedBy": []}`, `{"id": "shop--search", "blockedBy": []}, {}`},
			needle:  `{}`, off: 1,
			want: []string{"id", "blockedBy"}, only: true,
			checks: []complCheck{
				{label: "id", newText: `"id": "$1"`, format: 2, from: 1, to: 1},
				{label: "blockedBy", newText: `"blockedBy": [$1]`, format: 2},
			},
		},
		{
			name: "epic top-level property names", file: epic,
			replace: [2]string{`"title": "Online shop",`, `"title": "Online shop", ,`},
			needle:  `, ,`, off: 2,
			want: []string{"status"}, only: true,
		},
		// --- story ---
		{
			name: "story epic value", file: ".saga/stories/shop--refunds/story.json",
			replace: [2]string{`"id": "shop--refunds",`, `"id": "shop--refunds", "epic": "",`},
			needle:  `"epic": ""`, off: len(`"epic": "`),
			want: []string{"shop", "billing"}, only: true,
			checks: []complCheck{
				{label: "shop", newText: `"shop"`, from: 8, to: 10, sortText: "0_shop", detail: "Online shop"},
				{label: "billing", sortText: "1_billing", detail: "Billing"},
			},
		},
		{
			name: "story status enum", file: ".saga/stories/pipeline/story.json",
			replace: [2]string{`"id": "pipeline",`, `"id": "pipeline", "status": "in`},
			needle:  `"status": "in`, off: len(`"status": "in`),
			want: []string{"pending", "in_progress", "completed"}, only: true,
			checks: []complCheck{{label: "in_progress", newText: `"in_progress"`, from: 10, to: 13}},
		},
		// --- enums ---
		{
			name: "task status enum", file: pipeline + "lint.json",
			replace: [2]string{`"status": "pending"`, `"status": ""`},
			needle:  `"status": ""`, off: len(`"status": "`),
			want: []string{"pending", "in_progress", "completed"}, only: true,
			checks: []complCheck{
				{label: "pending", newText: `"pending"`, from: 10, to: 12, sortText: "0", detail: "Not started yet."},
				{label: "completed", sortText: "2"},
			},
		},
		{
			name: "task priority with no value yet, before another member", file: pipeline + "lint.json",
			replace: [2]string{`"status": "pending",`, `"status": "pending",
  "priority": 
  "activeForm": "Linting",`},
			needle: `"priority": `, off: len(`"priority": `),
			want: []string{"critical", "high", "medium", "low"}, only: true,
			checks: []complCheck{{label: "high", newText: `"high",`, from: 12, to: 12}},
		},
		{
			name: "task priority bare word", file: pipeline + "lint.json",
			replace: [2]string{`"status": "pending",`, `"status": "pending", "priority": hi,`},
			needle:  `hi,`, off: 2,
			want: []string{"critical", "high", "medium", "low"}, only: true,
			checks: []complCheck{{label: "high", newText: `"high"`, from: 0, to: 2}},
		},
		// --- property names ---
		{
			name: "task property names without snippets", file: pipeline + "lint.json",
			text:   "{\n  \"id\": \"lint\",\n  \n}\n",
			needle: "\",\n  \n", off: 5,
			want: taskProps[1:], only: true, not: []string{"id"},
			checks: []complCheck{
				{label: "subject", newText: `"subject": `, format: 1, sortText: "0_subject", from: 5, to: 5},
				{label: "status", newText: `"status": `, format: 1, sortText: "0_status", detail: "required, pending | in_progress | completed"},
				{label: "priority", newText: `"priority": `, format: 1, sortText: "1_priority"},
			},
		},
		{
			name: "task property names with snippets", file: pipeline + "lint.json", snippets: true,
			text:   "{\n  \"id\": \"lint\",\n  \n}\n",
			needle: "\",\n  \n", off: 5,
			want: taskProps[1:], only: true,
			checks: []complCheck{
				{label: "subject", newText: `"subject": "$1"`, format: 2, sortText: "0_subject"},
				{label: "status", newText: `"status": "${1|pending,in_progress,completed|}"`, format: 2},
				{label: "blockedBy", newText: `"blockedBy": [$1]`, format: 2},
				{label: "priority", newText: `"priority": "${1|critical,high,medium,low|}"`, format: 2, sortText: "1_priority"},
				{label: "checks", newText: `"checks": [$1]`, format: 2, detail: "array"},
				{label: "checkTimeout", newText: `"checkTimeout": ${1:600}`, format: 2, detail: "number"},
			},
		},
		{
			name: "property name being typed, unterminated", file: pipeline + "lint.json", snippets: true,
			text:   "{\n  \"id\": \"lint\", \"sta\n}\n",
			needle: `"sta`, off: 4,
			want: []string{"status", "subject"},
			checks: []complCheck{{label: "status", newText: `"status": "${1|pending,in_progress,completed|}"`,
				from: 0, to: 4, format: 2, filter: `"status"`}},
		},
		{
			name: "property name retyped before its colon", file: pipeline + "lint.json", snippets: true,
			replace: [2]string{`"subject": "Lint the code"`, `"sub": "Lint the code"`},
			needle:  `"sub"`, off: 4,
			want: []string{"subject"}, not: []string{"id", "status", "description", "blockedBy"},
			checks: []complCheck{{label: "subject", newText: `"subject"`, from: 0, to: 5, format: 1}},
		},
		{
			name: "property name on a new line after a member without comma", file: pipeline + "lint.json", snippets: true,
			text:   "{\n  \"id\": \"lint\"\n  \n}\n",
			needle: "\"lint\"\n  ", off: len("\"lint\"\n  "),
			want: []string{"subject"}, not: []string{"id"},
			checks: []complCheck{{label: "subject", newText: `"subject": "$1"`, commaAfter: `"lint"`}},
		},
		{
			name: "property name typed on a new line after a member without comma", file: pipeline + "lint.json", snippets: true,
			text:   "{\n  \"id\": \"lint\"\n  \"sub\n}\n",
			needle: `"sub`, off: 4,
			want: []string{"subject"}, not: []string{"id"},
			checks: []complCheck{{label: "subject", newText: `"subject": "$1"`, from: 0, to: 4, commaAfter: `"lint"`}},
		},
		{
			name: "property name before another member", file: pipeline + "lint.json", snippets: true,
			text:   "{\n  \n  \"id\": \"lint\"\n}\n",
			needle: "{\n  ", off: 4,
			want: []string{"subject"}, not: []string{"id"},
			checks: []complCheck{{label: "subject", newText: `"subject": "$1",`, from: 4, to: 4}},
		},
		// --- nothing applies ---
		{
			name: "whitespace after a value on its line", file: pipeline + "lint.json",
			replace: [2]string{`"status": "pending",`, `"status": "pending" ,`},
			needle:  `"pending" ,`, off: len(`"pending" `),
			null: true,
		},
		{
			name: "between a key and its colon", file: pipeline + "lint.json",
			replace: [2]string{`"status": "pending",`, `"status" : "pending",`},
			needle:  `"status" :`, off: len(`"status" `),
			null: true,
		},
		{
			name: "before the document", file: pipeline + "lint.json",
			text:   "  \n{\"id\": \"lint\"}\n",
			needle: "  ", off: 1,
			null: true,
		},
		{
			name: "not a .saga file", file: "notes.json",
			needle: `"status": ""`, off: len(`"status": "`),
			null: true,
		},
		{
			name: "empty document", file: pipeline + "new-task.json",
			empty: true,
			null:  true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runComplCase(t, tc)
		})
	}
}

func runComplCase(t *testing.T, tc complCase) {
	root := copyTestdata(t, "completion")
	text := tc.text
	if text == "" && !tc.empty {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(tc.file)))
		if err != nil {
			t.Fatal(err)
		}
		text = string(data)
		if tc.replace[0] != "" {
			if !strings.Contains(text, tc.replace[0]) {
				t.Fatalf("%s does not contain %q", tc.file, tc.replace[0])
			}
			text = strings.Replace(text, tc.replace[0], tc.replace[1], 1)
		}
	}
	c := start(t)
	caps := ""
	if tc.snippets {
		caps = snippetCaps
	}
	c.initialize(root, caps)
	c.openText(tc.file, text, 1)
	pos := `{"line":0,"character":0}`
	if tc.needle != "" {
		pos = at(t, text, tc.needle, tc.n, tc.off)
	}
	m := c.call("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`, c.uri(tc.file), pos))
	if m.Error != nil {
		t.Fatalf("error %d %s", m.Error.Code, m.Error.Message)
	}
	t.Logf("completion → %s", m.Result)
	if tc.null {
		if s := strings.TrimSpace(string(m.Result)); s != "null" && s != "" {
			t.Fatalf("want null, got %s", m.Result)
		}
		return
	}
	var list complList
	if err := json.Unmarshal(m.Result, &list); err != nil || string(m.Result) == "null" {
		t.Fatalf("want a CompletionList, got %s (%v)", m.Result, err)
	}
	if list.IsIncomplete {
		t.Errorf("isIncomplete = true")
	}
	var labels []string
	byLabel := map[string]complItem{}
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
	for _, w := range tc.want {
		if _, ok := byLabel[w]; !ok {
			t.Errorf("%q not offered; got %v", w, labels)
		}
	}
	if tc.only {
		got, want := slices.Sorted(slices.Values(labels)), slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("labels = %v, want exactly %v", got, want)
		}
	}
	for _, n := range tc.not {
		if _, ok := byLabel[n]; ok {
			t.Errorf("%q offered; it must not be", n)
		}
	}
	base := needleAt(t, text, tc.needle, tc.n)
	for _, ck := range tc.checks {
		it, ok := byLabel[ck.label]
		if !ok || it.TextEdit == nil {
			continue // reported above
		}
		if ck.newText != "" {
			if it.TextEdit.NewText != ck.newText {
				t.Errorf("%q newText = %q, want %q", ck.label, it.TextEdit.NewText, ck.newText)
			}
			want := lspRange{Start: lspclient.PositionAt(text, base+ck.from), End: lspclient.PositionAt(text, base+ck.to)}
			if ck.to != 0 && it.TextEdit.Range != want {
				t.Errorf("%q range = %+v, want %+v", ck.label, it.TextEdit.Range, want)
			}
		}
		if ck.format != 0 && it.InsertTextFormat != ck.format {
			t.Errorf("%q insertTextFormat = %d, want %d", ck.label, it.InsertTextFormat, ck.format)
		}
		if ck.sortText != "" && it.SortText != ck.sortText {
			t.Errorf("%q sortText = %q, want %q", ck.label, it.SortText, ck.sortText)
		}
		if ck.detail != "" && it.Detail != ck.detail {
			t.Errorf("%q detail = %q, want %q", ck.label, it.Detail, ck.detail)
		}
		if ck.filter != "" && it.FilterText != ck.filter {
			t.Errorf("%q filterText = %q, want %q", ck.label, it.FilterText, ck.filter)
		}
		switch {
		case ck.commaAfter != "":
			i := strings.Index(text, ck.commaAfter) + len(ck.commaAfter)
			p := lspclient.PositionAt(text, i)
			if len(it.AdditionalTextEdits) != 1 || it.AdditionalTextEdits[0].NewText != "," ||
				it.AdditionalTextEdits[0].Range != (lspRange{Start: p, End: p}) {
				t.Errorf("%q additionalTextEdits = %+v, want a comma at %+v", ck.label, it.AdditionalTextEdits, p)
			}
		case len(it.AdditionalTextEdits) > 0:
			t.Errorf("%q has unexpected additionalTextEdits %+v", ck.label, it.AdditionalTextEdits)
		}
	}
}

// TestCompletionDocumentation: property names and enum values carry their
// schema description as Markdown documentation.
func TestCompletionDocumentation(t *testing.T) {
	root := copyTestdata(t, "completion")
	c := startOn(t, root, "")
	text := "{\n  \"id\": \"lint\",\n  \"status\": \"\",\n  \n}\n"
	rel := ".saga/stories/pipeline/lint.json"
	c.openText(rel, text, 1)
	for _, tc := range []struct {
		pos, label, want string
	}{
		{at(t, text, "\",\n  \n", 0, 5), "priority", "Order within a wave"},
		{at(t, text, `"status": "`, 0, len(`"status": "`)), "in_progress", "Execution status"},
	} {
		var list complList
		c.result("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`, c.uri(rel), tc.pos), &list)
		found := false
		for _, it := range list.Items {
			if it.Label != tc.label {
				continue
			}
			found = true
			var doc struct{ Kind, Value string }
			if err := json.Unmarshal(it.Documentation, &doc); err != nil || doc.Kind != "markdown" || !strings.Contains(doc.Value, tc.want) {
				t.Errorf("%q documentation = %s, want markdown containing %q", tc.label, it.Documentation, tc.want)
			}
		}
		if !found {
			t.Errorf("%q not offered", tc.label)
		}
	}
}

// TestCompletionFollowsEdits: the cycle rule reads the other buffers, not
// only disk: once lint is made blocked by report (in an open buffer),
// report's blockedBy no longer offers lint.
func TestCompletionFollowsEdits(t *testing.T) {
	root := copyTestdata(t, "completion")
	c := startOn(t, root, "")
	c.openText(".saga/stories/pipeline/lint.json",
		"{\"id\": \"lint\", \"subject\": \"Lint\", \"description\": \"\", \"status\": \"pending\", \"blockedBy\": [\"report\"]}", 1)
	text := "{\"id\": \"report\", \"subject\": \"Report\", \"description\": \"\", \"status\": \"pending\", \"blockedBy\": [\"clean-data\", ]}"
	rel := ".saga/stories/pipeline/report.json"
	c.openText(rel, text, 1)
	var list complList
	c.result("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`,
		c.uri(rel), at(t, text, ", ]", 0, 2)), &list)
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	slices.Sort(labels)
	if want := []string{"fetch-data", "load-data"}; !slices.Equal(labels, want) {
		t.Errorf("labels = %v, want %v", labels, want)
	}
}

// TestCompletionEveryOffset asks for completion at every position of
// half-typed documents: the answer is always a list or null, never an error.
func TestCompletionEveryOffset(t *testing.T) {
	root := copyTestdata(t, "completion")
	c := startOn(t, root, snippetCaps)
	docs := map[string]string{
		".saga/stories/pipeline/lint.json":   "{\n  \"id\": \"lint\", \"sub\n  \"blockedBy\": [\"re, \"\", fetch-data,\n  \"status\": \"in_\n  \"priority\": hi\n  \"doneWhen\" \n  , \"guidance\": {\"é😀\": [}\r\n  \"",
		".saga/epics/shop/epic.json":         "{\"id\": \"shop\", \"children\": [{\"id\": \"shop--\", \"blockedBy\": [\"shop--cart\", ]}, {\"id\" \"x\", {}, [\"\n  ], \"status\": ",
		".saga/stories/shop--pay/story.json": "{\"id\": \"shop--pay\",, \"epic\": \"sh\", \"status\": [\"pending\"], \"title\": {\"x\":",
	}
	hits := 0
	for rel, text := range docs {
		c.openText(rel, text, 1)
		for off := range len(text) + 1 {
			if off < len(text) && !utf8.RuneStart(text[off]) {
				continue
			}
			p := lspclient.PositionAt(text, off)
			m := c.call("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":{"line":%d,"character":%d}}`,
				c.uri(rel), p.Line, p.Character))
			if m.Error != nil {
				t.Fatalf("%s at byte %d (%+v): error %d %s", rel, off, p, m.Error.Code, m.Error.Message)
			}
			if s := string(m.Result); s != "null" && !strings.HasPrefix(s, `{"isIncomplete":false,"items":[`) {
				t.Fatalf("%s at byte %d: result %s", rel, off, s)
			}
			// LSP: an item's edit is on the cursor's line and contains it.
			var list complList
			_ = json.Unmarshal(m.Result, &list)
			for _, it := range list.Items {
				if it.TextEdit == nil {
					t.Fatalf("%s at byte %d: %q has no textEdit", rel, off, it.Label)
				}
				r := it.TextEdit.Range
				if r.Start.Line != p.Line || r.End.Line != p.Line || r.Start.Character > p.Character || r.End.Character < p.Character {
					t.Fatalf("%s at byte %d (%+v): %q edit range %+v does not hold the cursor", rel, off, p, it.Label, r)
				}
			}
			hits += len(list.Items)
		}
	}
	if hits == 0 {
		t.Error("no position offered anything")
	}
}
