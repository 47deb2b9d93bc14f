package lsp

// saga.land and saga.resolveConflict (docs/landing.md#in-the-dashboard-and-the-editors):
// one pass of runs/land over a story or an epic — `saga-lsp land
// <name>` without --watch — answered with `land --format json`'s
// result, a work-done progress meanwhile; and a story's run on its
// conflict-resolution task (control.Resolve, `land --resolve`), followed
// as runStory's.

import (
	"context"
	"fmt"

	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/store"
)

// landArgs are land's: a story or an epic, by name (resolved as `land`
// resolves it) or as "story"/"epic"; the flags of `saga-lsp land`.
type landArgs struct {
	Name   string `json:"name"`
	Story  string `json:"story"`
	Epic   string `json:"epic"`
	Method string `json:"method"`
	DryRun bool   `json:"dryRun"`
}

// cmdLand lands what is ready of the story (its blockers landed) or of
// the epic's stories, in dependency order.
func cmdLand(ctx context.Context, s *Server, snap *Snapshot, a landArgs) (any, error) {
	name, want, err := pickName("land", a.Name, a.Story, a.Epic)
	if err != nil {
		return nil, err
	}
	kind, err := store.ResolveName(snap.WS, name, want)
	if err != nil {
		return nil, nameError("land", name, err)
	}
	epic := kind == store.NameEpic
	prog := s.beginProgress("Landing "+name, "reading its pull requests")
	res, err := land.Land(ctx, land.Options{Setup: s.runSetupFor(snap.Root), Target: name, Epic: epic, Workspace: snap.WS,
		Parser: s.parser, Method: a.Method, DryRun: a.DryRun})
	if err != nil {
		prog.end("failed")
		return nil, commandError("land", err)
	}
	landed := 0
	for _, o := range res.Stories {
		if o.State == land.Landed {
			landed++
		}
	}
	prog.end(fmt.Sprintf("%d of %d landed", landed, len(res.Stories)))
	s.log.Info("land", "target", name, "epic", epic, "actions", len(res.Actions))
	return res, nil
}

// cmdResolveConflict starts the story's run on its conflict-resolution
// task, then follows it; refused when it has none.
func cmdResolveConflict(ctx context.Context, s *Server, snap *Snapshot, a storyArgs) (any, error) {
	st, err := control.Resolve(ctx, control.RunOptions{Setup: s.runSetupFor(snap.Root), Story: a.Story})
	if err != nil {
		return nil, commandError("resolveConflict", err)
	}
	return s.followedStory("resolveConflict", st), nil
}
