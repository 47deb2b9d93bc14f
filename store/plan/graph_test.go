package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// graphCase is one testdata/graph/*.txtar archive:
//
//	items.json   the items, as a JSON array of Item (id, subject, status, blockedBy, broken)
//	states.json  optional: the states map
//	critical     CriticalPath's ids, one line, space-separated ("" when none)
//	mermaid      WriteMermaid's output
//	dot          WriteDot's output
//
// go test ./store/plan -update rewrites critical, mermaid and dot.
type graphCase struct {
	name   string
	path   string
	arch   *txtar.Archive
	items  []Item
	states map[string]string
}

func graphCases(t *testing.T) []graphCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/graph/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/graph/*.txtar: %v", err)
	}
	var cases []graphCase
	for _, p := range paths {
		arch, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := graphCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, arch: arch}
		for _, f := range arch.Files {
			var err error
			switch f.Name {
			case "items.json":
				err = json.Unmarshal(f.Data, &c.items)
			case "states.json":
				err = json.Unmarshal(f.Data, &c.states)
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", p, f.Name, err)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

func (c graphCase) section(name string) (string, bool) {
	for _, f := range c.arch.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// outputs is what the case's sections must hold.
func (c graphCase) outputs(t *testing.T) map[string]string {
	t.Helper()
	var m, d bytes.Buffer
	if err := WriteMermaid(&m, c.items, c.states); err != nil {
		t.Fatal(err)
	}
	if err := WriteDot(&d, c.items, c.states); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"critical": strings.Join(CriticalPath(c.items, c.states), " ") + "\n",
		"mermaid":  m.String(),
		"dot":      d.String(),
	}
}

func TestGraphGolden(t *testing.T) {
	for _, c := range graphCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got := c.outputs(t)
			if *update {
				c.arch.Files = slices.DeleteFunc(c.arch.Files, func(f txtar.File) bool { return got[f.Name] != "" })
				for _, name := range []string{"critical", "mermaid", "dot"} {
					c.arch.Files = append(c.arch.Files, txtar.File{Name: name, Data: []byte(got[name])})
				}
				if err := os.WriteFile(c.path, txtar.Format(c.arch), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range []string{"critical", "mermaid", "dot"} {
				want, ok := c.section(name)
				if !ok {
					t.Fatalf("%s has no %q section (run with -update to create)", c.path, name)
				}
				if got[name] != want {
					t.Errorf("%s differs from %s:\n--- got ---\n%s--- want ---\n%s", name, c.path, got[name], want)
				}
			}
		})
	}
}

// TestDotRendersWithGraphviz lays every golden DOT out with Graphviz's
// dot and reads back what it drew: the nodes are the items, the drawn
// label lines are the ids, states and titles unescaped, the edges are the
// blockers, and dot warns about nothing.
func TestDotRendersWithGraphviz(t *testing.T) {
	dotBin := testkit.NeedsTool(t, "dot", "apt-get install graphviz: DOT output not laid out")
	for _, c := range graphCases(t) {
		t.Run(c.name, func(t *testing.T) {
			src, _ := c.section("dot")
			cmd := exec.Command(dotBin, "-Tjson")
			cmd.Stdin = strings.NewReader(src)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil || errOut.Len() > 0 {
				t.Fatalf("dot -Tjson: %v\n%s", err, errOut.String())
			}
			var laid struct {
				Objects []struct {
					Name  string `json:"name"`
					LDraw []struct {
						Op   string `json:"op"`
						Text string `json:"text"`
					} `json:"_ldraw_"`
				} `json:"objects"`
				Edges []struct {
					Tail  int    `json:"tail"`
					Head  int    `json:"head"`
					Style string `json:"style"`
					Label string `json:"label"`
				} `json:"edges"`
			}
			if err := json.Unmarshal(out.Bytes(), &laid); err != nil {
				t.Fatalf("dot -Tjson output: %v", err)
			}
			d := newDrawing(c.items, c.states)
			var names []string
			for i, o := range laid.Objects {
				names = append(names, o.Name)
				if i >= len(d.g.ids) {
					continue
				}
				var drawn []string
				for _, op := range o.LDraw {
					if op.Op == "T" {
						drawn = append(drawn, op.Text)
					}
				}
				check(t, "drawn label of "+o.Name, drawn, d.label(i))
			}
			check(t, "nodes", orEmpty(names), orEmpty(d.g.ids))
			var edges, want [][2]string
			for _, e := range laid.Edges {
				edges = append(edges, [2]string{names[e.Tail], names[e.Head]})
				if e.Label == "cycle" != (e.Style == "dashed") {
					t.Errorf("edge %s -> %s: style %q, label %q", names[e.Tail], names[e.Head], e.Style, e.Label)
				}
			}
			for _, e := range d.edges {
				want = append(want, [2]string{d.g.ids[e.from], d.g.ids[e.to]})
			}
			// dot numbers edges its own way: compare them as sets.
			cmpEdge := func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) }
			slices.SortFunc(edges, cmpEdge)
			slices.SortFunc(want, cmpEdge)
			check(t, "edges", edges, want)
		})
	}
}

// TestMermaidRenders renders every golden Mermaid graph with Mermaid itself
// (testdata/mermaid/render.mjs, in jsdom under Node) and reads back what it
// drew: a node per item with its label lines unescaped and its state and
// critical classes, the edges with the critical ones thick and the cycle's
// dotted and labelled. It needs Node and the npm packages of
// testdata/mermaid: with SAGA_MERMAID_TEST=1 (.ci/run sets it) it installs
// them with `npm ci` when absent; otherwise it runs only if they are there.
func TestMermaidRenders(t *testing.T) {
	dir := filepath.Join("testdata", "mermaid")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid")); err != nil {
		if os.Getenv("SAGA_MERMAID_TEST") != "1" {
			testkit.Needs(t, "Mermaid is not installed in testdata/mermaid: set SAGA_MERMAID_TEST=1 to install it (npm ci) and render the graphs")
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	type drawnGraph struct {
		Error string `json:"error"`
		Nodes []struct {
			ID      string   `json:"id"`
			Classes []string `json:"classes"`
			Lines   []string `json:"lines"`
		} `json:"nodes"`
		Edges []struct {
			From    string   `json:"from"`
			To      string   `json:"to"`
			Classes []string `json:"classes"`
			Style   string   `json:"style"`
			Label   string   `json:"label"`
		} `json:"edges"`
	}
	// One Node process for all cases: loading Mermaid takes a second.
	cases := graphCases(t)
	var srcs []string
	for _, c := range cases {
		src, _ := c.section("mermaid")
		srcs = append(srcs, src)
	}
	in, err := json.Marshal(srcs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "render.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("node render.mjs: %v\n%s", err, errOut.String())
	}
	var results []drawnGraph
	if err := json.Unmarshal(out.Bytes(), &results); err != nil || len(results) != len(cases) {
		t.Fatalf("render.mjs output (%d results for %d cases): %v\n%s", len(results), len(cases), err, out.String())
	}
	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			drawn := results[k]
			if drawn.Error != "" {
				t.Fatalf("Mermaid rejects the graph: %s", drawn.Error)
			}
			d := newDrawing(c.items, c.states)
			if len(drawn.Nodes) != len(d.g.ids) {
				t.Fatalf("mermaid drew %d nodes, want %d", len(drawn.Nodes), len(d.g.ids))
			}
			for v, n := range drawn.Nodes {
				check(t, "node id", n.ID, "n"+strconv.Itoa(v+1))
				check(t, "label of "+n.ID, n.Lines, d.label(v))
				var want []string
				if s, ok := styleOf(d.states[v]); ok {
					want = append(want, s.state)
				}
				if d.onPath[v] {
					want = append(want, "critical")
				}
				check(t, "classes of "+n.ID, orEmpty(n.Classes), orEmpty(want))
			}
			if len(drawn.Edges) != len(d.edges) {
				t.Fatalf("mermaid drew %d edges, want %d", len(drawn.Edges), len(d.edges))
			}
			for i, e := range drawn.Edges {
				want := d.edges[i]
				name := e.From + "→" + e.To
				check(t, "edge", name, "n"+strconv.Itoa(want.from+1)+"→n"+strconv.Itoa(want.to+1))
				check(t, name+" thick", slices.Contains(e.Classes, "edge-thickness-thick"), want.critical)
				check(t, name+" in the critical colour", strings.Contains(e.Style, criticalColour), want.critical)
				check(t, name+" dotted", slices.Contains(e.Classes, "edge-pattern-dotted"), want.cycle)
				check(t, name+" in the cycle colour", strings.Contains(e.Style, cycleColour), want.cycle)
				check(t, name+" label", e.Label == "cycle", want.cycle)
			}
		})
	}
}

// TestCriticalPathLarge checks CriticalPath against an independent count on
// 10,000 items: with nothing completed and no cycle, the longest chain has
// as many items as Compute has (unsplit) waves, each item in it blocked by
// the one before. A ring of 10,000 leaves only the item behind it.
func TestCriticalPathLarge(t *testing.T) {
	const n = 10_000
	id := func(i int) string { return fmt.Sprintf("t%05d", i) }
	r := rand.New(rand.NewPCG(3, 11))
	chain := make([]Item, n)
	dag := make([]Item, n)
	ring := make([]Item, n, n+1)
	for i := range n {
		chain[i], dag[i], ring[i] = it(id(i)), it(id(i)), it(id(i), id((i+1)%n))
		if i > 0 {
			chain[i].BlockedBy = []string{id(i - 1)}
			for range r.IntN(4) {
				dag[i].BlockedBy = append(dag[i].BlockedBy, id(r.IntN(i)))
			}
		}
	}
	r.Shuffle(n, func(i, j int) { dag[i], dag[j] = dag[j], dag[i] })
	ring = append(ring, it("z", id(0)))

	path := CriticalPath(chain, nil)
	if len(path) != n || path[0] != id(0) || path[n-1] != id(n-1) {
		t.Errorf("chain: path of %d from %s", len(path), path[0])
	}

	path = CriticalPath(dag, nil)
	if want := Compute(dag, 0).WaveCount; len(path) != want {
		t.Errorf("random DAG: path of %d items, want %d (the number of waves)", len(path), want)
	}
	blockers := map[string][]string{}
	for _, item := range dag {
		blockers[item.ID] = item.BlockedBy
	}
	for i := 1; i < len(path); i++ {
		if !slices.Contains(blockers[path[i]], path[i-1]) {
			t.Fatalf("random DAG: %s is not blocked by %s, its predecessor on the path", path[i], path[i-1])
		}
	}

	check(t, "ring", CriticalPath(ring, nil), []string{"z"})
}
