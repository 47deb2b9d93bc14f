package store_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestUpdateMatchesBuild: after any sequence of edits, an incrementally
// updated workspace has exactly the diagnostics of one built from scratch, and
// every file whose diagnostics changed is listed as affected.
func TestUpdateMatchesBuild(t *testing.T) {
	p := workspace.Parser(t)
	// Both dialects: the examples, and upstream SAGA's layouts (flat epics,
	// worktree copies, absent epics, misplaced files) from the rule cases.
	roots := []string{"../examples/mistakes", "../examples/workspace"}
	for _, c := range []string{"upstream-flat", "upstream-worktree", "absent-epic", "mixed-dialects", "misplaced"} {
		files, _ := readCase(t, filepath.Join("testdata/rules", c+".txtar"))
		root := t.TempDir()
		for name, data := range files {
			writeFile(t, filepath.Join(root, name), data)
		}
		roots = append(roots, root)
	}
	base := loadFiles(t, p, roots...)
	// A story large enough to keep an id index (so its edits take the
	// incremental path of the task rules).
	base[".saga/stories/many/story.json"] = []byte(`{"id": "many", "title": "Many", "description": ""}`)
	gen := rand.New(rand.NewPCG(7, 7))
	for i := range 80 {
		var by []string
		for range gen.IntN(3) {
			by = append(by, fmt.Sprintf("%q", fmt.Sprintf("m-%d", gen.IntN(i+1))))
		}
		status := []string{"pending", "completed", "in_progress"}[gen.IntN(3)]
		base[fmt.Sprintf(".saga/stories/many/m-%d.json", i)] = []byte(fmt.Sprintf(
			`{"id": "m-%d", "subject": "s", "description": "", "status": %q, "blockedBy": [%s]}`, i, status, strings.Join(by, ", ")))
	}
	var rels []string
	for rel := range base {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	edits := []func(r *rand.Rand, rel string, src []byte) []byte{
		func(r *rand.Rand, rel string, src []byte) []byte { return nil }, // delete
		func(r *rand.Rand, rel string, src []byte) []byte { // break the syntax
			i := r.IntN(len(src) + 1)
			return append(slices.Clone(src[:i]), src[min(len(src), i+3):]...)
		},
		func(r *rand.Rand, rel string, src []byte) []byte { // retarget a reference
			names := []string{"write-tests", "login-endpoint", "user-auth--api", "billing--invoices", "ghost", "send-emails", "add-logout-button",
				"cart-api", "pay-form", "routes", "a", "m-3", "m-40", "m-79"}
			return []byte(strings.Replace(string(src), `"blockedBy": [`, fmt.Sprintf(`"blockedBy": [%q, `, names[r.IntN(len(names))]), 1))
		},
		func(r *rand.Rand, rel string, src []byte) []byte { // complete it
			return []byte(strings.Replace(string(src), `"pending"`, `"completed"`, 1))
		},
		func(r *rand.Rand, rel string, src []byte) []byte { // rename the id
			return []byte(strings.Replace(string(src), `"id": "`, `"id": "x`, 1))
		},
		func(r *rand.Rand, rel string, src []byte) []byte { // list another child, or drop the first
			if r.IntN(2) == 0 {
				return []byte(strings.Replace(string(src), `{"id": "`, `{"x": "`, 1))
			}
			names := []string{"guide", "e--unlisted", "nope--x", "search", "cart-api", "pay-form", "user-auth--api", "ghost"}
			return []byte(strings.Replace(string(src), `"children": [`, fmt.Sprintf(`"children": [{"id": %q, "blockedBy": []}, `, names[r.IntN(len(names))]), 1))
		},
		func(r *rand.Rand, rel string, src []byte) []byte { // name another epic, or none
			epics := []string{"checkout", "shop", "user-auth", "billing", "ghost", ""}
			e := epics[r.IntN(len(epics))]
			if i := strings.Index(string(src), `"epic": "`); i >= 0 {
				j := i + len(`"epic": "`)
				k := j + strings.IndexByte(string(src[j:]), '"')
				return []byte(string(src[:j]) + e + string(src[k:]))
			}
			return []byte(strings.Replace(string(src), `"title": `, fmt.Sprintf(`"epic": %q, "title": `, e), 1))
		},
	}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 1))
		files := cloneMap(base)
		ws := buildFrom(p, files)
		for step := range 12 {
			var changed []*store.File
			var removed []string
			for range 1 + r.IntN(3) {
				var rel string
				if r.IntN(5) == 0 { // sometimes a new file: a task, a worktree copy's task or story, an epic
					story := []string{"user-auth--api", "billing--invoices", "fresh", "user-auth--new", "cart-api", "pay-form", "many"}[r.IntN(7)]
					switch r.IntN(4) {
					case 0:
						rel = fmt.Sprintf(".saga/worktrees/%s/.saga/stories/%s/new-%d.json", story, story, step)
					case 1:
						rel = fmt.Sprintf(".saga/worktrees/%s/.saga/stories/%s/story.json", story, story)
					case 2:
						rel = fmt.Sprintf(".saga/epics/%s.json", []string{"checkout", "fresh", "user-auth"}[r.IntN(3)])
					default:
						rel = fmt.Sprintf(".saga/stories/%s/new-%d.json", story, step)
					}
					switch kind, _, _ := store.Classify(rel); kind {
					case store.KindStory:
						files[rel] = []byte(fmt.Sprintf(`{"id": %q, "title": "t", "description": "", "epic": "checkout"}`, story))
					case store.KindEpic:
						files[rel] = []byte(fmt.Sprintf(`{"id": "x", "title": "t", "description": "", "children": [{"id": %q, "blockedBy": []}]}`, story))
					default:
						files[rel] = []byte(fmt.Sprintf(`{"id": "new-%d", "subject": "s", "description": "", "status": "pending", "blockedBy": ["send-emails", "routes"]}`, step))
					}
				} else {
					rel = rels[r.IntN(len(rels))]
					src, ok := files[rel]
					if !ok {
						continue
					}
					if next := edits[r.IntN(len(edits))](r, rel, src); next == nil {
						delete(files, rel)
						removed = append(removed, rel)
						changed = slices.DeleteFunc(changed, func(f *store.File) bool { return f.Rel == rel })
						continue
					} else {
						files[rel] = next
					}
				}
				removed = slices.DeleteFunc(removed, func(r string) bool { return r == rel })
				changed = append(changed, p.Parse(rel, files[rel], int32(step)))
			}
			before := byFile(ws.Diagnostics())
			var affected []string
			ws, affected = ws.Update(changed, removed)
			want := buildFrom(p, files)
			got, exp := dumpDiags(ws.Diagnostics()), dumpDiags(want.Diagnostics())
			if got != exp {
				t.Fatalf("seed %d step %d: incremental differs from full build\nincremental:\n%s\nfull:\n%s", seed, step, got, exp)
			}
			after := byFile(ws.Diagnostics())
			for f := range unionKeys(before, after) {
				if before[f] != after[f] && !slices.Contains(affected, f) {
					t.Fatalf("seed %d step %d: diagnostics of %s changed but it is not in affected %v", seed, step, f, affected)
				}
			}
		}
	}
}

func loadFiles(t *testing.T, p *store.Parser, roots ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, root := range roots {
		ws, err := p.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ws.Files() {
			if f.Kind != store.KindMisplaced { // a folder has no content; a misplaced file's does not matter
				out[f.Rel] = f.Src
			} else {
				out[f.Rel] = []byte{}
			}
		}
		for _, id := range ws.SortedStoryIDs() {
			for _, s := range []*store.Story{ws.Copies(id).Main, ws.Copies(id).Worktree} {
				if s != nil && s.Journal != nil {
					data, _ := os.ReadFile(filepath.Join(root, s.Journal.Rel))
					out[s.Journal.Rel] = data
				}
			}
		}
	}
	return out
}

// buildFrom builds a workspace from in-memory files; story folders are the
// ones holding a file.
func buildFrom(p *store.Parser, files map[string][]byte) *store.Workspace {
	var fs []*store.File
	dirs := map[string]bool{}
	for rel, src := range files {
		f := p.Parse(rel, src, 0)
		fs = append(fs, f)
		if f.Kind == store.KindStory || f.Kind == store.KindTask || f.Kind == store.KindJournal {
			dirs[path.Dir(f.Rel)] = true
		}
	}
	var ds []string
	for d := range dirs {
		ds = append(ds, d)
	}
	return store.Build("/ws", ds, fs)
}

func byFile(ds []store.Diagnostic) map[string]string {
	out := map[string]string{}
	for _, d := range ds {
		out[d.File] += fmt.Sprintf("%d:%d %s %s\n", d.Range.Start.Line, d.Range.Start.Character, d.Code, d.Message)
	}
	return out
}

func dumpDiags(ds []store.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s:%d:%d %s %s\n", d.File, d.Range.Start.Line, d.Range.Start.Character, d.Code, d.Message)
	}
	return b.String()
}

func cloneMap(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func unionKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
