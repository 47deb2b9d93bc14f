package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const (
	fixtureRoot  = "testdata/workspace"
	fixtureStory = "hydrate-demo"
	goldenDir    = "testdata/golden/hydrate-demo"
)

// loadFixtureStory loads the fixture workspace through the real parser.
func loadFixtureStory(t testing.TB) *store.Story {
	t.Helper()
	ws := workspace.Load(t, fixtureRoot)
	for _, d := range ws.Diagnostics() {
		t.Errorf("fixture diagnostic: %+v", d)
	}
	s := ws.Story(fixtureStory)
	if s == nil {
		t.Fatalf("fixture story %s not loaded", fixtureStory)
	}
	return s
}

func hydrateFixture(t *testing.T) (dir string, tasks []Task) {
	t.Helper()
	tasks = FromStory(loadFixtureStory(t))
	dir = ListDir(t.TempDir(), ListID(fixtureStory, 1700000000000))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Hydrate(ctx, dir, tasks); err != nil {
		t.Fatal(err)
	}
	return dir, tasks
}

// TestHydrateGolden checks the hydrated files byte for byte against
// testdata/golden (go test -run TestHydrateGolden -update rewrites them).
func TestHydrateGolden(t *testing.T) {
	dir, tasks := hydrateFixture(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".lock", "docs.json", "setup-db.json", "write-api.json", "write-tests.json"}
	if !slices.Equal(names, want) {
		t.Errorf("list dir holds %q, want %q (no .highwatermark, no lock or temp left)", names, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, ".lock")); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Errorf(".lock: %v, %v; want an empty file", fi, err)
	}
	if *updateGolden {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, task := range tasks {
		name := task.ID + ".json"
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join(goldenDir, name)
		if *updateGolden {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		wantB, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantB) {
			t.Errorf("%s differs from %s:\n got: %q\nwant: %q", name, golden, got, wantB)
		}
	}

	// The properties the goldens encode, stated independently of them.
	read := func(id string) string {
		b, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		id       string
		keys     []string // in file order
		contains []string
		lacks    []string
	}{
		{"setup-db",
			[]string{"id", "subject", "description", "activeForm", "status", "blocks", "blockedBy", "metadata"},
			[]string{"{\n  \"id\": \"setup-db\",\n", "\"status\": \"completed\"", "\"blocks\": [\n    \"write-api\",\n    \"write-tests\"\n  ]", "\"blockedBy\": []",
				"\"metadata\": {\n    \"doneWhen\": \"Migrations apply cleanly.\",\n    \"guidance\": \"Use the existing migration tool.\"\n  }\n}"},
			[]string{"owner", "priority"}},
		{"write-api",
			[]string{"id", "subject", "description", "status", "blocks", "blockedBy", "metadata"},
			[]string{"\"status\": \"pending\"", "<api> & docs 🚀", "U+2028:[\u2028] U+2029:[\u2029]", `ctrl:[\u0001\u001f\b\f\r]`, "del:[\x7f]", "é 日本 <b>&amp;</b> é 😀",
				`Line one\nline two\ttabbed \"quoted\" back\\slash`, "\"metadata\": {\n    \"guidance\": \"Keep </script> and & as they are.\"\n  }"},
			[]string{"activeForm", "doneWhen", "priority", `\u003c`, `\u2028`, `\u0026`}},
		{"write-tests",
			[]string{"id", "subject", "description", "activeForm", "status", "blocks", "blockedBy", "metadata"},
			[]string{"\"description\": \"Done when:\\ngo test passes\",", "\"blocks\": []", "\"blockedBy\": [\n    \"write-api\",\n    \"setup-db\"\n  ]", "\"metadata\": {\n    \"doneWhen\": \"go test passes\"\n  }"},
			[]string{"guidance"}},
		{"docs",
			[]string{"id", "subject", "description", "status", "blocks", "blockedBy"},
			[]string{"\"blockedBy\": [\n    \"write-api\"\n  ]\n}"},
			[]string{"metadata", "activeForm"}},
	} {
		s := read(tc.id)
		if strings.HasSuffix(s, "\n") || !strings.HasSuffix(s, "}") {
			t.Errorf("%s: must end with } and no newline", tc.id)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Errorf("%s: %v", tc.id, err)
		}
		if len(m) != len(tc.keys) {
			t.Errorf("%s: %d top-level keys, want %q", tc.id, len(m), tc.keys)
		}
		last := -1
		for _, k := range tc.keys {
			i := strings.Index(s, "\n  \""+k+"\": ")
			if i <= last {
				t.Errorf("%s: key %q at %d, want after %d (order %q)", tc.id, k, i, last, tc.keys)
			}
			last = i
		}
		for _, c := range tc.contains {
			if !strings.Contains(s, c) {
				t.Errorf("%s: lacks %q:\n%s", tc.id, c, s)
			}
		}
		for _, c := range tc.lacks {
			if strings.Contains(s, c) {
				t.Errorf("%s: must not contain %q:\n%s", tc.id, c, s)
			}
		}
	}

	// Claude Code's view of the list is what was hydrated.
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tasks) {
		t.Errorf("Read found %d tasks, want %d", len(got), len(tasks))
	}
	for _, task := range tasks {
		b1, _ := Encode(task)
		b2, _ := Encode(got[task.ID])
		if !bytes.Equal(b1, b2) {
			t.Errorf("Read(%s) = %s, want %s", task.ID, b2, b1)
		}
	}
}

// trickyTasks exercise escaping, number formatting and key order.
func trickyTasks() []Task {
	var ctrl strings.Builder
	for c := range 0x20 {
		ctrl.WriteByte(byte(c))
	}
	ctrl.WriteString("\x7f\"\\/")
	return []Task{
		{ID: "1", Subject: "", Description: "", Status: StatusPending},
		{ID: "ctrl", Subject: ctrl.String(), Description: "\u2028\u2029<>&'` \u00a0\ufeff\U0001F600\u200d\U0001F469", Status: StatusCompleted,
			Owner: "agent-1", ActiveForm: "Doing </script>", Blocks: []string{"a", "b"}, BlockedBy: []string{"\n"}},
		{ID: "meta", Subject: "m", Description: "d", Status: StatusInProgress, Metadata: map[string]any{
			"b": "x", "a": 1.5, "B": true, "_internal": false, "10": nil, "9": "nine", "2": []any{}, "01": map[string]any{},
			"4294967294": "max index", "4294967295": "not an index", "-1": "neg", "é": "accent", "Z": "upper",
			"nested": map[string]any{"z": []any{1.0, "two", map[string]any{"k": "v", "1": 1.0}, []any{}}, "a": nil},
			"numbers": []any{0.0, math.Copysign(0, -1), 1e21, 1e20, 1e-7, 1.5e-7, 1e-6, 123456789012.0, 0.1, -2.5e-10, 1e300, 5e-324,
				float32(0.1), json.Number("1.0"), json.Number("1e2"), 42, int64(1) << 53, int32(-7), uint8(200), math.NaN(), math.Inf(1)},
			"strings": map[string]string{"s": "<&>\u2028"},
			"list":    []string{"x", "y"},
		}},
	}
}

// TestNodeStringify proves the format against a real JavaScript engine:
// for each task, JSON.stringify(JSON.parse(MarshalJSON), null, 2) must be
// Encode's bytes and JSON.stringify(JSON.parse(...)) MarshalJSON's, and every
// golden file must be a fixed point of Claude Code's parse-then-stringify.
func TestNodeStringify(t *testing.T) {
	node := testkit.NeedsTool(t, "node", "Debian: apt-get install -y nodejs")
	tasks := append(FromStory(loadFixtureStory(t)), trickyTasks()...)
	var in struct {
		Docs  []string `json:"docs"`
		Files []string `json:"files"`
	}
	var indented, compact [][]byte
	for _, task := range tasks {
		c, err := task.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		i, err := Encode(task)
		if err != nil {
			t.Fatal(err)
		}
		compact, indented = append(compact, c), append(indented, i)
		in.Docs = append(in.Docs, string(c))
	}
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, g := range goldens {
		abs, err := filepath.Abs(g)
		if err != nil {
			t.Fatal(err)
		}
		in.Files = append(in.Files, abs)
	}
	tmp := t.TempDir()
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "in.json"), input, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `const fs = require('fs');
const inp = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {
  docs: inp.docs.map(s => { const o = JSON.parse(s); return [JSON.stringify(o, null, 2), JSON.stringify(o)]; }),
  files: inp.files.map(p => { const s = fs.readFileSync(p, 'utf8'); return JSON.stringify(JSON.parse(s), null, 2) === s; }),
};
process.stdout.write(JSON.stringify(out));
`
	if err := os.WriteFile(filepath.Join(tmp, "check.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(tmp, "check.js"), filepath.Join(tmp, "in.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outB, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, &stderr)
	}
	var out struct {
		Docs  [][2]string `json:"docs"`
		Files []bool      `json:"files"`
	}
	if err := json.Unmarshal(outB, &out); err != nil {
		t.Fatalf("node output %q: %v", outB, err)
	}
	if len(out.Docs) != len(tasks) || len(out.Files) != len(goldens) {
		t.Fatalf("node answered %d docs, %d files; want %d, %d", len(out.Docs), len(out.Files), len(tasks), len(goldens))
	}
	for i, task := range tasks {
		if out.Docs[i][0] != string(indented[i]) {
			t.Errorf("task %q: Encode differs from JSON.stringify(o, null, 2):\n got: %q\nnode: %q", task.ID, indented[i], out.Docs[i][0])
		}
		if out.Docs[i][1] != string(compact[i]) {
			t.Errorf("task %q: MarshalJSON differs from JSON.stringify(o):\n got: %q\nnode: %q", task.ID, compact[i], out.Docs[i][1])
		}
	}
	for i, ok := range out.Files {
		if !ok {
			t.Errorf("%s is not a fixed point of JSON.stringify(JSON.parse(s), null, 2)", goldens[i])
		}
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		task Task
		want string
	}{
		{"minimal, nil arrays are []",
			Task{ID: "1", Subject: "s", Status: StatusPending},
			"{\n  \"id\": \"1\",\n  \"subject\": \"s\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"},
		{"every field",
			Task{ID: "a", Subject: "S", Description: "D", ActiveForm: "Doing", Status: StatusInProgress, Owner: "me",
				Blocks: []string{"b"}, BlockedBy: []string{"c", "d"}, Metadata: map[string]any{"guidance": "g", "doneWhen": "w"}},
			"{\n  \"id\": \"a\",\n  \"subject\": \"S\",\n  \"description\": \"D\",\n  \"activeForm\": \"Doing\",\n  \"status\": \"in_progress\",\n  \"owner\": \"me\",\n" +
				"  \"blocks\": [\n    \"b\"\n  ],\n  \"blockedBy\": [\n    \"c\",\n    \"d\"\n  ],\n  \"metadata\": {\n    \"doneWhen\": \"w\",\n    \"guidance\": \"g\"\n  }\n}"},
		{"empty metadata omitted",
			Task{ID: "a", Subject: "S", Status: StatusCompleted, Metadata: map[string]any{}},
			"{\n  \"id\": \"a\",\n  \"subject\": \"S\",\n  \"description\": \"\",\n  \"status\": \"completed\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"},
		{"nested metadata",
			Task{ID: "a", Subject: "S", Status: StatusPending, Metadata: map[string]any{"x": map[string]any{"e": map[string]any{}, "l": []any{1, "<&>"}}, "n": nil}},
			"{\n  \"id\": \"a\",\n  \"subject\": \"S\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [],\n" +
				"  \"metadata\": {\n    \"n\": null,\n    \"x\": {\n      \"e\": {},\n      \"l\": [\n        1,\n        \"<&>\"\n      ]\n    }\n  }\n}"},
		{"escapes",
			Task{ID: "a", Subject: "\"\\\b\f\n\r\t\x00\x1f\x7f<>&\u2028\u2029😀\xff", Status: StatusPending},
			"{\n  \"id\": \"a\",\n  \"subject\": \"\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\x7f<>&\u2028\u2029😀\ufffd\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.task)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Encode:\n got: %q\nwant: %q", got, tc.want)
			}
			compact, err := tc.task.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, got); err != nil {
				t.Fatal(err)
			}
			if buf.String() != string(compact) {
				t.Errorf("MarshalJSON = %q, want the compact form %q", compact, buf.String())
			}
			back, err := Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Encode(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, got) {
				t.Errorf("Encode(Decode(x)) = %q, want x", again)
			}
		})
	}
	for _, bad := range []string{"", "deleted", "Pending"} {
		if _, err := Encode(Task{ID: "x", Status: bad}); err == nil || !strings.Contains(err.Error(), "status") {
			t.Errorf("Encode with status %q: err = %v, want a status error", bad, err)
		}
	}
	if _, err := Encode(Task{ID: "x", Status: StatusPending, Metadata: map[string]any{"c": make(chan int)}}); err == nil {
		t.Error("Encode with an unencodable metadata value: want an error")
	}
	// json.Marshal goes through MarshalJSON and keeps the key order.
	b, err := json.Marshal(Task{ID: "z", Subject: "s", Status: StatusPending, Owner: "o"})
	if err != nil || string(b) != `{"id":"z","subject":"s","description":"","status":"pending","owner":"o","blocks":[],"blockedBy":[]}` {
		t.Errorf("json.Marshal = %s, %v", b, err)
	}
}

func TestDecode(t *testing.T) {
	const base = `"id":"1","subject":"s","description":"d","status":"pending","blocks":[],"blockedBy":["2"]`
	tests := []struct {
		name    string
		doc     string
		want    Task
		wantErr string
	}{
		{"minimal", `{` + base + `}`, Task{ID: "1", Subject: "s", Description: "d", Status: "pending", Blocks: []string{}, BlockedBy: []string{"2"}}, ""},
		{"unknown keys dropped, optional fields read",
			`{` + base + `,"activeForm":"a","owner":"o","extra":{"x":1},"priority":"high","metadata":{"k":[1,"v"],"n":2.5}}`,
			Task{ID: "1", Subject: "s", Description: "d", ActiveForm: "a", Status: "pending", Owner: "o", Blocks: []string{}, BlockedBy: []string{"2"},
				Metadata: map[string]any{"k": []any{1.0, "v"}, "n": 2.5}}, ""},
		{"duplicate key: last wins", `{` + base + `,"status":"completed"}`,
			Task{ID: "1", Subject: "s", Description: "d", Status: "completed", Blocks: []string{}, BlockedBy: []string{"2"}}, ""},
		{"missing id", `{"subject":"s","description":"d","status":"pending","blocks":[],"blockedBy":[]}`, Task{}, `missing "id"`},
		{"missing subject", `{"id":"1","description":"d","status":"pending","blocks":[],"blockedBy":[]}`, Task{}, `missing "subject"`},
		{"missing description", `{"id":"1","subject":"s","status":"pending","blocks":[],"blockedBy":[]}`, Task{}, `missing "description"`},
		{"missing status", `{"id":"1","subject":"s","description":"d","blocks":[],"blockedBy":[]}`, Task{}, `missing "status"`},
		{"missing blocks", `{"id":"1","subject":"s","description":"d","status":"pending","blockedBy":[]}`, Task{}, `missing "blocks"`},
		{"missing blockedBy", `{"id":"1","subject":"s","description":"d","status":"pending","blocks":[]}`, Task{}, `missing "blockedBy"`},
		{"numeric id", `{"id":1,"subject":"s","description":"d","status":"pending","blocks":[],"blockedBy":[]}`, Task{}, `"id" is not a string`},
		{"null description", `{"id":"1","subject":"s","description":null,"status":"pending","blocks":[],"blockedBy":[]}`, Task{}, `"description" is not a string`},
		{"deleted status", `{"id":"1","subject":"s","description":"d","status":"deleted","blocks":[],"blockedBy":[]}`, Task{}, `status "deleted"`},
		{"blocks not array", `{"id":"1","subject":"s","description":"d","status":"pending","blocks":{},"blockedBy":[]}`, Task{}, `"blocks" is not an array`},
		{"blockedBy with a number", `{"id":"1","subject":"s","description":"d","status":"pending","blocks":[],"blockedBy":["a",2]}`, Task{}, `"blockedBy"[1] is not a string`},
		{"null activeForm", `{` + base + `,"activeForm":null}`, Task{}, `"activeForm" is not a string`},
		{"numeric owner", `{` + base + `,"owner":7}`, Task{}, `"owner" is not a string`},
		{"metadata array", `{` + base + `,"metadata":[]}`, Task{}, `"metadata" is not an object`},
		{"metadata null", `{` + base + `,"metadata":null}`, Task{}, `"metadata" is not an object`},
		{"not an object", `[]`, Task{}, "decode task"},
		{"null", `null`, Task{}, "not a JSON object"},
		{"truncated", `{` + base, Task{}, "decode task"},
		{"empty", ``, Task{}, "decode task"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Decode err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got.Metadata)
			wb, _ := json.Marshal(tc.want.Metadata)
			got.Metadata, tc.want.Metadata = nil, nil
			if !taskEqual(got, tc.want) || !bytes.Equal(gb, wb) {
				t.Errorf("Decode = %+v %s, want %+v %s", got, gb, tc.want, wb)
			}
		})
	}
}

// taskEqual compares the non-metadata fields, telling nil and empty slices
// apart (Decode promises non-nil ones).
func taskEqual(a, b Task) bool {
	return a.ID == b.ID && a.Subject == b.Subject && a.Description == b.Description && a.ActiveForm == b.ActiveForm &&
		a.Status == b.Status && a.Owner == b.Owner && slices.Equal(a.Blocks, b.Blocks) && slices.Equal(a.BlockedBy, b.BlockedBy) &&
		(a.Blocks == nil) == (b.Blocks == nil) && (a.BlockedBy == nil) == (b.BlockedBy == nil)
}

func refs(ids ...string) []store.Ref {
	out := make([]store.Ref, len(ids))
	for i, id := range ids {
		out[i] = store.Ref{ID: id}
	}
	return out
}

func TestToClaudeTask(t *testing.T) {
	tests := []struct {
		name   string
		in     store.Task
		blocks []string
		want   Task
		meta   map[string]any
	}{
		{"plain", store.Task{ID: "a", Subject: "S", Description: "D", Status: "pending", Priority: "high"}, nil,
			Task{ID: "a", Subject: "S", Description: "D", Status: "pending", Blocks: []string{}, BlockedBy: []string{}}, nil},
		{"guidance only", store.Task{ID: "a", Status: "completed", ActiveForm: "Af", Guidance: "g", BlockedBy: refs("x", "y")}, []string{"z"},
			Task{ID: "a", Description: "Guidance:\ng", ActiveForm: "Af", Status: "completed", Blocks: []string{"z"}, BlockedBy: []string{"x", "y"}}, map[string]any{"guidance": "g"}},
		{"doneWhen only", store.Task{ID: "a", Status: "in_progress", DoneWhen: "w"}, nil,
			Task{ID: "a", Description: "Done when:\nw", Status: "in_progress", Blocks: []string{}, BlockedBy: []string{}}, map[string]any{"doneWhen": "w"}},
		{"both", store.Task{ID: "a", Description: "D", Status: "pending", Guidance: "g", DoneWhen: "w"}, nil,
			Task{ID: "a", Description: "D\n\nGuidance:\ng\n\nDone when:\nw", Status: "pending", Blocks: []string{}, BlockedBy: []string{}}, map[string]any{"guidance": "g", "doneWhen": "w"}},
		{"checks", store.Task{ID: "a", Description: "D", Status: "pending", DoneWhen: "w", Checks: []store.Check{{Command: "go test ./..."}, {Command: "test -f out"}}, CheckTimeout: 90 * time.Second}, nil,
			Task{ID: "a", Description: "D\n\nDone when:\nw\n\nChecks (each must exit 0, run with sh -c in the worktree within 1m30s, before this task can be completed):\n- go test ./...\n- test -f out", Status: "pending", Blocks: []string{}, BlockedBy: []string{}}, map[string]any{"doneWhen": "w"}},
		{"checks, default timeout", store.Task{ID: "a", Status: "pending", Checks: []store.Check{{Command: "make"}}}, nil,
			Task{ID: "a", Description: "Checks (each must exit 0, run with sh -c in the worktree within 10m0s, before this task can be completed):\n- make", Status: "pending", Blocks: []string{}, BlockedBy: []string{}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ToClaudeTask(&tc.in, tc.blocks)
			meta := got.Metadata
			got.Metadata = nil
			if !taskEqual(got, tc.want) {
				t.Errorf("ToClaudeTask = %+v, want %+v", got, tc.want)
			}
			if (meta == nil) != (tc.meta == nil) || len(meta) != len(tc.meta) {
				t.Fatalf("metadata = %#v, want %#v", meta, tc.meta)
			}
			for k, v := range tc.meta {
				if meta[k] != v {
					t.Errorf("metadata[%q] = %v, want %v", k, meta[k], v)
				}
			}
			if FromClaudeTask(ToClaudeTask(&tc.in, nil)) != tc.in.Status {
				t.Errorf("FromClaudeTask does not give back the status %q", tc.in.Status)
			}
		})
	}
	// blocks is copied, not aliased.
	blocks := []string{"b"}
	ct := ToClaudeTask(&store.Task{ID: "a", Status: "pending"}, blocks)
	blocks[0] = "changed"
	if ct.Blocks[0] != "b" {
		t.Error("ToClaudeTask aliases the caller's blocks")
	}
}

func TestFromStory(t *testing.T) {
	s := &store.Story{ID: "st", Tasks: []*store.Task{
		{ID: "c", Status: "in_progress", BlockedBy: refs("a", "b", "a", "c", "ghost")},
		{ID: "a", Status: "completed"},
		nil,
		{ID: "b", Status: "in_progress", BlockedBy: refs("a")},
		{ID: "d", Status: "pending", BlockedBy: refs("b", "c")},
	}}
	got := FromStory(s)
	want := []struct {
		id, status        string
		blocks, blockedBy []string
	}{
		{"a", "completed", []string{"b", "c"}, []string{}},
		{"b", "pending", []string{"c", "d"}, []string{"a"}},
		{"c", "pending", []string{"d"}, []string{"a", "b", "a", "c", "ghost"}},
		{"d", "pending", []string{}, []string{"b", "c"}},
	}
	if len(got) != len(want) {
		t.Fatalf("FromStory gave %d tasks, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.Status != w.status || !slices.Equal(g.Blocks, w.blocks) || !slices.Equal(g.BlockedBy, w.blockedBy) || g.Blocks == nil {
			t.Errorf("task %d = %+v, want %+v", i, g, w)
		}
	}
	// The story itself is not changed by the in_progress reset.
	if s.Tasks[0].Status != "in_progress" {
		t.Error("FromStory changed the store.Task")
	}
	if FromStory(nil) != nil || len(FromStory(&store.Story{})) != 0 {
		t.Error("FromStory of nil or an empty story: want no tasks")
	}
}
