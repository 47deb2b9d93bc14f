//go:build unix

package land_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/land"
)

// ghCalls are the gh invocations the stand-in logged, one line each; ok:
// only those that succeeded.
func (f *fixture) ghCalls(ok bool) []string {
	f.t.Helper()
	var out []string
	for _, e := range f.env {
		if path, ok := strings.CutPrefix(e, "GH_STANDIN_LOG="); ok {
			for line := range strings.Lines(testkit.ReadFile(f.t, path)) {
				var l struct {
					Args     []string
					ExitCode int
				}
				json.Unmarshal([]byte(line), &l)
				if !ok || l.ExitCode == 0 {
					out = append(out, strings.Join(l.Args, " "))
				}
			}
		}
	}
	return out
}

// The diamond lands through the merge queue: each story enqueued once its
// blockers merged (not merely queued), its merge group merged on green; d's
// group is red: ejected, a stop with the reason in its record, kept while
// its head is the same; enqueued again by a person, it lands.
func TestLandMergeQueue(t *testing.T) {
	f := newFixture(t)
	f.edit(func(st map[string]any) {
		st["repository"].(map[string]any)["mergeQueue"] = true
		st["repository"].(map[string]any)["queueChecks"] = map[string]any{
			strconv.Itoa(int(f.pr("shop--d")["number"].(float64))): []any{map[string]any{"name": "test", "conclusion": "FAILURE"}}}
	})
	r := f.saga("land", "shop", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "method: the merge queue of main") || !strings.Contains(r.Stdout, "would enqueue shop--a: #") {
		t.Fatalf("land --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	res, r := f.land("shop")
	want := []string{"enqueued shop--a", "followed shop--b", "followed shop--c", "enqueued shop--b", "enqueued shop--c", "followed shop--d", "enqueued shop--d"}
	if got := did(res); r.Code != 1 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("land: exit %d, actions %q, want %q\n%s%s", r.Code, got, want, r.Stdout, r.Stderr)
	}
	for _, s := range []string{"shop--a", "shop--b", "shop--c"} {
		if o := outcome(res, s); o.State != land.Landed || f.pr(s)["state"] != "MERGED" {
			t.Errorf("%s: %+v, its PR %v", s, o, f.pr(s)["state"])
		}
	}
	d := outcome(res, "shop--d")
	if d.State != land.Ejected || !strings.Contains(d.Why, "ejected from the merge queue of main") || f.pr("shop--d")["state"] != "OPEN" {
		t.Errorf("d: %+v, its PR %v", d, f.pr("shop--d")["state"])
	}
	if st := f.status("shop--d"); st.Land == nil || st.Land.State != land.Ejected {
		t.Errorf("d's status: %+v", st.Land)
	}
	// b and c were queued together, c's group on b's: main's history.
	log := testkit.Git(t, f.origin, "log", "--first-parent", "--format=%s", "main")
	if !strings.Contains(log, "Merge pull request #") || strings.Count(log, "Merge pull request") != 3 {
		t.Errorf("main's history:\n%s", log)
	}
	// A later land keeps the stop: same head, not in the queue.
	res, _ = f.land("shop")
	if o := outcome(res, "shop--d"); o.State != land.Ejected || len(res.Actions) != 0 {
		t.Errorf("land again: d %+v, actions %q", o, did(res))
	}
	// A person adds it to the queue again, its group now green: it lands.
	f.edit(func(st map[string]any) { delete(st["repository"].(map[string]any), "queueChecks") })
	head := strings.TrimSpace(testkit.Git(t, f.origin, "rev-parse", "story/shop--d"))
	if g := f.gh("api", "graphql", "-f", "query=mutation($pr: ID!, $head: GitObjectID!) { enqueuePullRequest(input: {pullRequestId: $pr, expectedHeadOid: $head}) { mergeQueueEntry { state position } } }",
		"-F", "pr=PR_standin"+strconv.Itoa(int(f.pr("shop--d")["number"].(float64))), "-F", "head="+head); g.Code != 0 || !strings.Contains(g.Stdout, `"position":1`) {
		t.Fatalf("enqueue by hand: exit %d\n%s%s", g.Code, g.Stdout, g.Stderr)
	}
	res, r = f.land("shop")
	if o := outcome(res, "shop--d"); r.Code != 0 || o.State != land.Landed {
		t.Errorf("after d enqueued by hand: exit %d, d %+v\n%s", r.Code, o, r.Stdout)
	}
	for _, c := range f.ghCalls(false) {
		if strings.HasPrefix(c, "pr merge") {
			t.Errorf("land merged directly with a merge queue: %s", c)
		}
	}
}

// Inside a native stack land never edits a base nor merges: the story is
// refused with what to do; GitHub's refusals are the stand-in's too.
func TestLandStack(t *testing.T) {
	f := newFixture(t)
	a, b := int(f.pr("shop--a")["number"].(float64)), int(f.pr("shop--b")["number"].(float64))
	f.edit(func(st map[string]any) {
		st["stacks"] = []any{map[string]any{"number": 7, "base": "main", "prs": []any{a, b}}}
	})
	res, r := f.land("shop")
	if o := outcome(res, "shop--a"); r.Code != 1 || o.State != land.Refused || !strings.Contains(o.Why, "in GitHub's stack #7 (1 of 2, on main)") ||
		!strings.Contains(o.Next, "merge the stack on GitHub") || len(res.Actions) != 0 {
		t.Fatalf("land in a stack: exit %d, a %+v, actions %q\n%s", r.Code, o, did(res), r.Stderr)
	}
	if st := f.status("shop--a"); st.Land == nil || !strings.Contains(st.Land.Why, "stack #7") {
		t.Errorf("a's status: %+v", st.Land)
	}
	// GitHub refuses a base edit and a merge inside the stack.
	if g := f.gh("pr", "edit", strconv.Itoa(b), "--base", "main"); g.Code != 1 || !strings.Contains(g.Stderr, "in a stack (stack #7)") {
		t.Errorf("gh pr edit --base in a stack: exit %d %s", g.Code, g.Stderr)
	}
	if g := f.gh("pr", "merge", strconv.Itoa(a), "--merge"); g.Code != 1 || !strings.Contains(g.Stderr, "in a stack (stack #7)") {
		t.Errorf("gh pr merge in a stack: exit %d %s", g.Code, g.Stderr)
	}
	// a unstacked (the stack keeps b): a lands, c follows, b is refused
	// rather than retargeted.
	f.edit(func(st map[string]any) {
		st["stacks"] = []any{map[string]any{"number": 7, "base": "main", "prs": []any{b}}}
	})
	res, _ = f.land("shop")
	if got := did(res); strings.Join(got, ",") != "merged shop--a,followed shop--c,merged shop--c" {
		t.Errorf("after a unstacked: actions %q", got)
	}
	if o := outcome(res, "shop--b"); o.State != land.Refused || !strings.Contains(o.Why, "stack #7") {
		t.Errorf("b: %+v", o)
	}
	if f.pr("shop--b")["baseRefName"] != "story/shop--a" {
		t.Errorf("b's base was edited inside its stack: %v", f.pr("shop--b")["baseRefName"])
	}
	for _, c := range f.ghCalls(false) {
		if u := f.pr("shop--b")["url"].(string); strings.HasPrefix(c, "pr edit "+u+" --base") || strings.HasPrefix(c, "pr merge "+u) {
			t.Errorf("land asked GitHub inside the stack: %s", c)
		}
	}
}
