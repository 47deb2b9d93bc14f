//go:build unix

package views

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/browser"
	"github.com/saga-ai/saga-lsp/runs"
)

// reviewSaid is what one face says of a story's review loop.
type reviewSaid struct {
	Next string // the action offered
	// ChangesRequested is the n of "changes requested (n)", -1 when the face
	// does not say it; NeedsYou counts its "needs you:" lines.
	ChangesRequested, NeedsYou int
}

var changesRequested = func(text string) int {
	var n int
	i := strings.Index(text, "changes requested (")
	if i < 0 {
		return -1
	}
	fmt.Sscanf(text[i+len("changes requested ("):], "%d)", &n)
	return n
}

// TestViewsAgreeOnAReview: a completed story with a PR whose record holds
// its review (runs.UpdateReview, as a round or a watcher writes it): every
// face — status (text and JSON), the lens, the dashboard's story page
// (served and in a real browser) and follow — says "changes requested (n)"
// and offers "address review"; once the loop needs its person, each says
// "needs you" once, and offers the review alone (issue 34).
func TestViewsAgreeOnAReview(t *testing.T) {
	testkit.Bwrap(t) // checks run confined
	l := newLife(t)
	const story = "add-logout-button"
	l.ok("run", story, "--follow")
	if st := l.fromStatusStory(story); st.State != "completed" {
		t.Fatalf("the story's run: %+v", st)
	}
	faces := func(step string, want reviewSaid, wantText ...string) {
		t.Helper()
		t.Logf("%s", step)
		// status --format json: the read model's review and next step.
		var js struct {
			Stories []struct {
				PR     string
				Review *struct {
					Requests, ChangesRequested, Rounds int
					NeedsYou                           string
				}
				Next struct{ Action, Text string }
			}
		}
		res := l.saga("status", story, "--format", "json")
		if err := json.Unmarshal([]byte(res.Stdout), &js); err != nil || len(js.Stories) != 1 || js.Stories[0].Review == nil || js.Stories[0].PR == "" {
			t.Fatalf("%s: status --format json: %v\n%s%s", step, err, res.Stdout, res.Stderr)
		}
		s := js.Stories[0]
		got := reviewSaid{Next: s.Next.Action, ChangesRequested: s.Review.ChangesRequested, NeedsYou: strings.Count(s.Next.Text, "needs you:")}
		if got != want {
			t.Errorf("%s: status --format json %+v, want %+v", step, got, want)
		}
		text := l.saga("status", story).Stdout
		if got := (reviewSaid{Next: want.Next, ChangesRequested: changesRequested(text), NeedsYou: strings.Count(text, "needs you:")}); got != want {
			t.Errorf("%s: status text %+v, want %+v:\n%s", step, got, want, text)
		}
		for _, w := range wantText {
			if !strings.Contains(text, w) {
				t.Errorf("%s: status text without %q:\n%s", step, w, text)
			}
		}
		var lens string
		var lensGot reviewSaid
		testkit.WaitUntil(30*time.Second, func() bool {
			lens = l.lensOf(l.server, l.root, story)
			lensGot = reviewSaid{Next: lensNext(lens), ChangesRequested: changesRequested(lens), NeedsYou: strings.Count(lens, "needs you:")}
			return lensGot == want
		})
		if lensGot != want {
			t.Errorf("%s: lens %+v, want %+v: %s", step, lensGot, want, lens)
		}
		if want.Next == "address-review" && !strings.Contains(lens, fmt.Sprintf(`"title":"Address review (%d)","command":"saga.addressReview","arguments":[{"story":%q}]`, s.Review.Requests, story)) {
			t.Errorf("%s: no Address review lens: %s", step, lens)
		}
		client := &http.Client{Timeout: 30 * time.Second}
		url := l.storyPageURL(client, story)
		page := l.get(client, url)
		dash := reviewSaid{ChangesRequested: changesRequested(page), NeedsYou: strings.Count(page, "needs you:")}
		if n := storyNext.FindStringSubmatch(page); n != nil {
			dash.Next = n[1]
		}
		if dash != want {
			t.Errorf("%s: the dashboard's story page %+v, want %+v", step, dash, want)
		}
		if hasButton := strings.Contains(page, fmt.Sprintf(`id="address-review">Address review (%d)</button>`, s.Review.Requests)); hasButton != (want.Next == "address-review") {
			t.Errorf("%s: the story page's Address review button: %v", step, hasButton)
		}
		// The page as a browser shows it.
		b := browser.New(t)
		b.Do(chromedp.Navigate(l.dash), chromedp.Navigate(url))
		b.WaitJS(fmt.Sprintf(`(() => { const n = document.querySelector('#story-next'), r = document.querySelector('#story-review');
			return !!n && !!r && n.dataset.action === %q && +r.dataset.changesRequested === %d &&
				(document.body.innerText.match(/needs you:/g) || []).length === %d &&
				!!document.querySelector('#address-review') === %v; })()`, want.Next, want.ChangesRequested, want.NeedsYou, want.Next == "address-review"), 30*time.Second)
		// follow, of the ended run: the needs-you line once, when the record says it.
		if out := l.saga("follow", story).Stdout; strings.Count(out, "needs you:") != want.NeedsYou {
			t.Errorf("%s: follow said needs you %d times, want %d:\n%s", step, strings.Count(out, "needs you:"), want.NeedsYou, out)
		}
	}

	// A read of the review: two writers' reviews ask for changes, three
	// requests to address, four comments ignored.
	if err := runs.UpdateReview(l.dir, story, func(r *runs.ReviewRecord) {
		r.Rounds, r.Requests, r.ChangesRequested = 1, 3, 2
		r.Ignored = runs.ReviewIgnored{Bots: 1, NonWriters: 2, Hidden: 1}
	}); err != nil {
		t.Fatal(err)
	}
	faces("changes requested", reviewSaid{Next: "address-review", ChangesRequested: 2},
		"review:   changes requested (2) · 3 to address · 4 ignored (bots 1, non-writers 2, hidden 1) · round 1",
		"next:     address its review (3): `saga-lsp run "+story+" --review`")

	// Past its rounds: the loop needs its person.
	if err := runs.UpdateReview(l.dir, story, func(r *runs.ReviewRecord) {
		r.Rounds, r.NeedsYou = 3, "3 review rounds ran (--max-review-rounds 3)"
	}); err != nil {
		t.Fatal(err)
	}
	faces("needs you", reviewSaid{Next: "review", ChangesRequested: 2, NeedsYou: 1},
		"next:     needs you: 3 review rounds ran (--max-review-rounds 3)")
}
