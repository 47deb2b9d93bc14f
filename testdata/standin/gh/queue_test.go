package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const enqueueQuery = `mutation($pr: ID!) { enqueuePullRequest(input: {pullRequestId: $pr}) { mergeQueueEntry { state position } } }`

const entriesQuery = `query { repository(owner: "standin", name: "origin") {
  p1: pullRequest(number: 1) { state mergeQueueEntry { state position } }
  p2: pullRequest(number: 2) { state mergeQueueEntry { state position } }
  p3: pullRequest(number: 3) { state mergeQueueEntry { state position } } } }`

// The queue's merge groups: each entry merged onto the base as the ones
// ahead of it left it. While the group's checks run, it and those after
// it wait; green, the group merges; a PR conflicting with the group ahead
// of it is ejected, its PR left open.
func TestMergeQueueGroups(t *testing.T) {
	r := newRepo(t)
	for i, b := range []string{"one", "two", "three"} {
		r.git("checkout", "-q", "-b", b, "main")
		file := b + ".txt"
		if i > 0 {
			file = "shared.txt" // two and three conflict
		}
		os.WriteFile(filepath.Join(r.clone, file), []byte(b+"\n"), 0o644)
		r.git("add", file)
		r.git("commit", "-q", "-m", b)
		r.git("push", "-q", "origin", b)
		r.ok("pr", "create", "--title", b, "--body", "", "--base", "main")
	}
	state := filepath.Join(r.root, "gh-state.json")
	seed := func(ci string) {
		st := map[string]any{}
		data, _ := os.ReadFile(state)
		json.Unmarshal(data, &st)
		st["repository"] = map[string]any{"mergeQueue": true, "ci": []any{map[string]any{"name": "test", "status": ci, "conclusion": "SUCCESS"}}}
		data, _ = json.Marshal(st)
		os.WriteFile(state, data, 0o644)
	}
	seed("COMPLETED")
	for _, n := range []string{"1", "2", "3"} {
		r.ok("api", "graphql", "-f", "query="+enqueueQuery, "-F", "pr=PR_standin"+n)
	}
	if o := r.gh(nil, "api", "graphql", "-f", "query="+enqueueQuery, "-F", "pr=PR_standin1"); o.Code != 1 || !strings.Contains(o.Stderr, "already in the merge queue") {
		t.Errorf("enqueued twice: exit %d %s", o.Code, o.Stderr)
	}
	// The groups' checks still run: nothing merges, the first awaits them.
	seed("IN_PROGRESS")
	out := r.ok("api", "graphql", "-f", "query="+entriesQuery).Stdout
	if !strings.Contains(out, `"p1":{"mergeQueueEntry":{"position":1,"state":"AWAITING_CHECKS"},"state":"OPEN"}`) ||
		!strings.Contains(out, `"p3":{"mergeQueueEntry":{"position":3,"state":"QUEUED"},"state":"OPEN"}`) {
		t.Errorf("while the checks run: %s", out)
	}
	seed("COMPLETED")
	out = r.ok("api", "graphql", "-f", "query="+entriesQuery).Stdout
	for _, want := range []string{`"p1":{"mergeQueueEntry":null,"state":"MERGED"}`, `"p2":{"mergeQueueEntry":null,"state":"MERGED"}`, `"p3":{"mergeQueueEntry":null,"state":"OPEN"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("after the checks: no %s in %s", want, out)
		}
	}
	r.git("fetch", "-q", "origin")
	if log := r.git("log", "--first-parent", "--format=%s", "origin/main"); !strings.Contains(log, "Merge pull request #1 from one") ||
		!strings.Contains(log, "Merge pull request #2 from two") || strings.Contains(log, "#3") {
		t.Errorf("main: %s", log)
	}
}
