package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// pageProfile samples the page's main thread with V8's profiler when
// SAGA_BENCH_PAGE_PROFILE is set (it slows the page: never in a measure
// reported), and returns a func that stops it and logs the page's time by
// function, its own (self) time, the largest first: where a page's
// update goes on loaded cores.
func pageProfile(b *testing.B, ctx context.Context) func() {
	b.Helper()
	if os.Getenv("SAGA_BENCH_PAGE_PROFILE") == "" {
		return func() {}
	}
	_, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, t, profiler.Enable, cdp.Empty{}); err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, t, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 1000}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, t, profiler.Start, cdp.Empty{})
		return chromedp.Void{}, err
	})
	must(b, err)
	return func() {
		res, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (profiler.StopResult, error) {
			return cdp.Call(ctx, t, profiler.Stop, cdp.Empty{})
		})
		must(b, err)
		p := res.Profile
		byNode := map[int64]*profiler.ProfileNode{}
		for _, n := range p.Nodes {
			byNode[n.ID] = n
		}
		self := map[string]time.Duration{}
		for i, id := range p.Samples {
			if i+1 < len(p.TimeDeltas) {
				n := byNode[id]
				name := cmp.Or(n.CallFrame.FunctionName, "(anonymous)") + " " + path.Base(n.CallFrame.URL) + fmt.Sprintf(":%d", n.CallFrame.LineNumber+1)
				self[name] += time.Duration(p.TimeDeltas[i+1]) * time.Microsecond
			}
		}
		names := make([]string, 0, len(self))
		for n := range self {
			names = append(names, n)
		}
		slices.SortFunc(names, func(x, y string) int { return cmp.Compare(self[y], self[x]) })
		for _, n := range names[:min(25, len(names))] {
			b.Logf("page profile: %8.1f s  %s", self[n].Seconds(), n)
		}
	}
}
