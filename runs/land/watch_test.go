//go:build unix

package land_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/store"
)

// land --watch, paced by its passes instead of a clock: b waits for the
// approval the repository requires; when a pass finds nothing to do, a
// reviewer approves it and the next tick comes. b lands on a later pass,
// then d, and the watch ends by itself once every story landed.
func TestLandWatch(t *testing.T) {
	f := newFixture(t)
	f.approvals("shop--b")
	env := map[string]string{}
	for _, kv := range f.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if strings.HasPrefix(k, "GH_STANDIN_") {
			t.Setenv(k, v) // gh runs in this process's environment (runs.GHCommand)
		}
	}
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.Load(f.root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := make(chan time.Time, 1)
	approvedAfter := 0
	o := land.Options{Setup: control.NewSetup(f.root, func(k string) string { return env[k] }), Target: "shop", Epic: true,
		Workspace: ws, Parser: p, Watch: true, Tick: tick, GH: testkit.Build(t, "./testdata/standin/gh"),
		Passed: func(p land.Pass) {
			if p.Err != nil {
				t.Errorf("pass %d: %v", p.N, p.Err)
			}
			if len(p.Actions) > 0 {
				return // land looks again at once
			}
			if approvedAfter == 0 {
				for _, s := range p.Stories {
					if s.Story == "shop--b" && s.State == land.NotReady && strings.Contains(s.Why, "approval") {
						f.approvals("")
						approvedAfter = p.N
					}
				}
			}
			if p.N > 30 {
				t.Errorf("pass %d and not every story landed: %+v", p.N, p.Stories)
				cancel()
			}
			select {
			case tick <- time.Now():
			default:
			}
		}}
	res, err := land.Land(ctx, o)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("land --watch: %v (cancelled: %v)", err, ctx.Err())
	}
	if approvedAfter == 0 {
		t.Fatalf("b was never found waiting for its approval: %q", did(res))
	}
	want := "merged shop--a,followed shop--b,followed shop--c,merged shop--c,merged shop--b,followed shop--d,merged shop--d"
	if got := strings.Join(did(res), ","); got != want {
		t.Errorf("actions %s, want %s", got, want)
	}
	for _, a := range res.Actions {
		if a.Story == "shop--b" && a.Did == "merged" && a.Pass <= approvedAfter {
			t.Errorf("b merged in pass %d, before its approval after pass %d", a.Pass, approvedAfter)
		}
	}
	for _, s := range res.Stories {
		if s.State != land.Landed {
			t.Errorf("%s: %+v", s.Story, s)
		}
	}
}
