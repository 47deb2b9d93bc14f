//go:build unix

package land_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// A few random seeds of the property test through the real binary, git
// and the gh stand-in (docs/landing.md#the-property-test), on the diamond:
// a random method (merge, squash, the queue), approvals missing and given
// later, a story whose CI is red on every head, a red merge group, a
// native stack of b and d, a person merging between passes. Main's history holds
// the landings in dependency order, no PR is merged twice, no base is
// edited inside a stack, and every story that can land did.
func TestLandRandomThroughGitHub(t *testing.T) {
	r, _ := chaos.Start(t, 0)
	blockers := map[string][]string{"shop--b": {"shop--a"}, "shop--c": {"shop--a"}, "shop--d": {"shop--b", "shop--c"}}
	stories := []string{"shop--a", "shop--b", "shop--c", "shop--d"}
	first := r.IntN(3)
	for seed := range 3 { // each method once: an epic run is seconds
		f := newFixture(t)
		method := []string{"merge", "squash", "queue"}[(first+seed)%3]
		unapproved, red, ejects, stacked := map[string]bool{}, "", "", r.IntN(4) == 0
		for _, s := range stories {
			unapproved[s] = r.IntN(4) == 0
		}
		if r.IntN(2) == 0 {
			red = stories[1+r.IntN(3)]
		}
		if method == "queue" && r.IntN(3) != 0 {
			ejects = stories[r.IntN(4)]
		}
		num := func(s string) int { return int(f.pr(s)["number"].(float64)) }
		f.edit(func(st map[string]any) {
			repo := st["repository"].(map[string]any)
			repo["requiredApprovals"] = 1
			repo["mergeQueue"] = method == "queue"
			if ejects != "" {
				repo["queueChecks"] = map[string]any{strconv.Itoa(num(ejects)): []any{map[string]any{"name": "test", "conclusion": "FAILURE"}}}
			}
			for _, p := range st["prs"].([]any) {
				if p := p.(map[string]any); !unapproved[strings.TrimPrefix(p["headRefName"].(string), "story/")] {
					approve(p)
				}
			}
			if stacked {
				st["stacks"] = []any{map[string]any{"number": 1, "base": "main", "prs": []any{num("shop--b"), num("shop--d")}}}
			}
		})
		t.Logf("seed %d: %s, unapproved %v, red %q, ejected %q, stacked %v", seed, method, unapproved, red, ejects, stacked)
		quiet := 0
		for round := 0; round < 12 && quiet < 2; round++ {
			args := []string{"shop"}
			if method != "queue" {
				args = append(args, "--method", method)
			}
			res, _ := f.land(args...)
			events := 0
			// Between passes: a review given, the red story's CI red on its
			// new head, a person merging a ready PR.
			f.edit(func(st map[string]any) {
				checks, _ := st["checks"].(map[string]any)
				if checks == nil {
					checks = map[string]any{}
				}
				for _, p := range st["prs"].([]any) {
					p := p.(map[string]any)
					s := strings.TrimPrefix(p["headRefName"].(string), "story/")
					if unapproved[s] && r.IntN(2) == 0 {
						approve(p)
						unapproved[s] = false
						events++
					}
					if s == red {
						checks[strings.TrimSpace(testkit.Git(t, f.origin, "rev-parse", p["headRefName"].(string)))] = []any{map[string]any{"name": "test", "conclusion": "FAILURE"}}
					}
				}
				st["checks"] = checks
			})
			if method != "queue" && r.IntN(3) == 0 {
				for _, s := range stories {
					if o := outcome(res, s); o.State == land.NotReady || o.State == land.Pending {
						if g := f.gh("pr", "merge", f.pr(s)["url"].(string), "--merge"); g.Code == 0 {
							events++
							break
						}
					}
				}
			}
			if len(res.Actions) == 0 && events == 0 {
				quiet++
			} else {
				quiet = 0
			}
		}
		res, _ := f.land("shop", "--dry-run")
		// Main's first-parent history, newest first: each merged PR's
		// merge commit after its blockers'.
		main := strings.Fields(testkit.Git(t, f.origin, "rev-list", "--first-parent", "main"))
		at := map[string]int{}
		for _, s := range stories {
			if p := f.pr(s); p["state"] == "MERGED" {
				at[s] = slices.Index(main, p["mergeCommit"].(string))
				if at[s] < 0 {
					t.Errorf("seed %d: %s's merge commit is not on main", seed, s)
				}
			}
		}
		for s, b := range blockers {
			for _, x := range b {
				if i, ok := at[s]; ok {
					if j, ok := at[x]; !ok || j <= i {
						t.Errorf("seed %d: %s landed before its blocker %s (main %v)", seed, s, x, at)
					}
				}
			}
		}
		merges := map[string]int{}
		for _, c := range f.ghCalls(true) {
			if w := strings.Fields(c); len(w) > 2 && w[0] == "pr" && w[1] == "merge" {
				merges[w[2]]++
			}
		}
		for _, c := range f.ghCalls(false) {
			if stacked && (strings.HasPrefix(c, "pr edit "+f.pr("shop--b")["url"].(string)+" --base") || strings.HasPrefix(c, "pr edit "+f.pr("shop--d")["url"].(string)+" --base")) {
				t.Errorf("seed %d: a base edited inside the stack: %s", seed, c)
			}
		}
		for u, n := range merges {
			if n > 1 && slices.ContainsFunc(stories, func(s string) bool { return f.pr(s)["url"] == u }) {
				t.Errorf("seed %d: %s merged %d times", seed, u, n)
			}
		}
		// Every story that can land did: one left has a reason.
		for _, s := range stories {
			o := outcome(res, s)
			if o.State == land.Landed {
				continue
			}
			blocked := unapproved[s] || s == red || s == ejects || stacked && (s == "shop--b" || s == "shop--d")
			for _, b := range blockers[s] {
				blocked = blocked || outcome(res, b).State != land.Landed
			}
			if !blocked {
				t.Errorf("seed %d: %s could land but is %s: %s %s", seed, s, o.State, o.Why, o.Next)
			}
		}
		var js []byte
		js, _ = json.Marshal(res.Stories)
		t.Logf("seed %d: %s", seed, js)
	}
}
