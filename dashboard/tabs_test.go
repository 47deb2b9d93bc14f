package dashboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	tbrowser "github.com/saga-ai/saga-lsp/internal/testkit/browser"
)

// tab opens another tab of the same browser (its cookies, its
// connections); closing it is cancelling its context.
func (b *browser) tab(t *testing.T) (*browser, context.CancelFunc) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.Ctx)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(cancel)
	return &browser{&tbrowser.Browser{T: t, Ctx: ctx}}, cancel
}

// TestManyTabsLive: twelve tabs of one browser all live — a browser
// allows 6 HTTP/1.1 connections to a host, so they share one event stream
// (issue 33: the 7th tab never loaded) —, and after one is closed a new
// one is live too.
func TestManyTabsLive(t *testing.T) {
	root := shopRepo(t)
	s := serve(t, root)
	first := newBrowser(t)
	first.open(s.srv.URL())
	page := s.base + "/r/" + repoKeyOf(root) + "/story/shop--ui"
	first.open(page)
	tabs := []*browser{first}
	closers := []context.CancelFunc{func() {}}
	for len(tabs) < 12 {
		b, cancel := first.tab(t)
		b.open(page)
		tabs, closers = append(tabs, b), append(closers, cancel)
	}
	status := "pending"
	edit := func(to string) {
		testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--ui/page.json": task("page", to)})
		status = to
	}
	seeAll := func() {
		t.Helper()
		for _, b := range tabs {
			b.WaitJS(fmt.Sprintf(`document.querySelector('#task-page').dataset.status === %q`, status), 15*time.Second)
		}
	}
	edit("in_progress")
	seeAll()

	// Close one tab, open another: still every tab live.
	closers[5]()
	tabs = append(tabs[:5], tabs[6:]...)
	b, _ := first.tab(t)
	b.open(page)
	tabs = append(tabs, b)
	edit("completed")
	seeAll()
}
