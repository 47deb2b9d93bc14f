package land

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/control"
)

// foresee stops a ready story whose branch conflicts with a sibling's that
// lands before it — one landed already, or earlier in the landing order —
// before GitHub is asked to merge it (docs/landing.md#conflicts-foreseen):
// "conflict with <sibling>: <files>". The later of two conflicting
// siblings stops, never both, so the earlier still lands; the later's
// conflict is resolved by `land --resolve` (restack's conflict task).
func (o Options) foresee(ctx context.Context, id string, order []string, verdicts map[string]Verdict, v Verdict) Verdict {
	at := slices.Index(order, id)
	before := func(s string) bool {
		i := slices.Index(order, s)
		return verdicts[s].State == Landed || i >= 0 && i < at
	}
	found := control.ForeseeConflicts(ctx, o.Root, o.Workspace, id, before)
	if len(found) == 0 {
		return v
	}
	why := make([]string, len(found))
	for i, f := range found {
		why[i] = f.String()
	}
	return Verdict{State: NotReady, Why: strings.Join(why, "; "),
		Next: fmt.Sprintf("the sibling lands first; then `saga-lsp land --resolve %s` makes the conflict its conflict task (docs/landing.md#conflicts-foreseen)", id)}
}
