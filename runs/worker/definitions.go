package worker

import (
	"context"
	"fmt"
	"slices"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Definitions on the branch are the person's (docs/worker.md#definitions-on-the-branch):
// every definition file (story, task and epic JSON) the reference commit R
// has equals its version there, except a task's status (and a story's,
// which follows its tasks') and the journals. Before the end's commit the
// worker puts back anything else, whoever wrote it — an agent, a blocker's
// branch, an earlier saga-lsp that kept branch, pr and worktree in
// story.json — and reports it: the pull request never carries a weakened
// check. A definition R lacks (a story planned on its own branch) is left
// as it is.

// restoreDefinitions puts every definition file that differs from R back
// to R's version, keeping the statuses, and reports the files.
func (r *run) restoreDefinitions(ctx context.Context) {
	if r.reference == "" || r.ensureHead(ctx, runs.StepEnd) != nil {
		return
	}
	changed, err := r.wtGit.ChangedFrom(ctx, r.reference, ".saga/stories", ".saga/epics")
	if err != nil {
		r.j.Warn(runs.StepEnd, "compare the definitions with %s: %v", verify.Short(r.reference), err)
		return
	}
	var paths []string
	for p, st := range changed {
		kind, _, _ := store.Classify(p)
		if st != "A" && (kind == store.KindStory || kind == store.KindTask || kind == store.KindEpic) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	if len(paths) == 0 {
		return
	}
	blobs, err := r.wtGit.BlobsAt(ctx, r.reference, paths)
	if err != nil {
		r.j.Warn(runs.StepEnd, "read the definitions at %s: %v", verify.Short(r.reference), err)
		return
	}
	var restored []string
	for _, p := range paths {
		b, ok := blobs[p]
		if !ok {
			continue
		}
		cur, _ := filesafe.ReadInside(r.wt, p)
		want := withStatus(b.Data, cur, p)
		if cur != nil && string(want) == string(cur) {
			continue // only a status differs
		}
		// Never through a link out of the worktree the agent left.
		if err := filesafe.WriteFileBeneath(r.wt, p, want, 0o644); err != nil {
			r.j.Warn(runs.StepEnd, "restore %s: %v", termtext.Escape(p), err)
			continue
		}
		restored = append(restored, p)
	}
	if len(restored) == 0 {
		return
	}
	msg := fmt.Sprintf("restored definition files to their version at the reference commit %s (only task statuses and journals are the story's to change): %s",
		verify.Short(r.reference), names(restored))
	r.j.Warn(runs.StepEnd, "%s", msg)
	r.journalNote(msg)
	// Committed at once: the guard of .saga/ before each commit keeps the
	// branch's version, which this replaces.
	if _, err := r.wtGit.Run(ctx, append([]string{"add", "--"}, restored...)...); err != nil {
		r.j.Warn(runs.StepEnd, "restore the definitions: %v", err)
		return
	}
	if _, err := r.commitIndex(ctx, fmt.Sprintf("saga(%s): definitions as at the reference commit %s", r.o.Story, verify.Short(r.reference))); err != nil {
		r.j.Warn(runs.StepEnd, "restore the definitions: %v", err)
	}
}

// withStatus is a definition as R has it (atR) with the status the story
// gave it (in cur) where R's has one: a task's, or a story's that
// carries it.
func withStatus(atR, cur []byte, rel string) []byte {
	kind, _, _ := store.Classify(rel)
	if cur == nil || (kind != store.KindTask && kind != store.KindStory) {
		return atR
	}
	doc := jsonc.Parse(cur)
	st := doc.Root.Get("status")
	if st == nil || st.Kind != jsonc.String {
		return atR
	}
	if r := jsonc.Parse(atR).Root.Get("status"); r == nil || r.Kind != jsonc.String {
		return atR
	}
	if next, err := store.SetString(atR, "status", st.Str()); err == nil {
		return next
	}
	return atR
}
