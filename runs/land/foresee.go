package land

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/control"
)

// foresee stops a ready story whose branch conflicts with a sibling's that
// lands before it — earlier in the landing order, not landed yet — before
// GitHub is asked to merge it (docs/landing.md#conflicts-foreseen):
// "conflict with <sibling>: <files>". The later of two conflicting
// siblings stops, never both, so the earlier lands first; the later then
// conflicts with the default branch, which makes it follow it: the
// conflict becomes its conflict task (`land --resolve`). A sibling landed
// already is in the default branch, where GitHub's merge state tells.
func (o Options) foresee(ctx context.Context, id string, order []string, landed func(string) bool) (Verdict, bool) {
	at := slices.Index(order, id)
	before := func(s string) bool {
		i := slices.Index(order, s)
		return !landed(s) && i >= 0 && i < at
	}
	found := control.ForeseeConflicts(ctx, o.Root, o.Workspace, id, before)
	if len(found) == 0 {
		return Verdict{}, false
	}
	why := make([]string, len(found))
	for i, f := range found {
		why[i] = f.String()
	}
	return Verdict{State: NotReady, Why: strings.Join(why, "; "),
		Next: fmt.Sprintf("the sibling lands first; then land rebuilds %s on the default branch, its conflict becoming its conflict task for `saga-lsp land --resolve %s` (docs/landing.md#conflicts-foreseen)", id, id)}, true
}
