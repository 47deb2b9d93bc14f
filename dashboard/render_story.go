package dashboard

// The story page: its facts and actions, about, tasks, journal, runs
// and output (render.go has the layout and the other pages).

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

func (h *hw) story(p page, c storyContent) {
	h.crumbs(p, c.Repo, func() {
		if c.Epic != "" {
			h.m(` › `)
			h.link(epicHref(c.Repo, c.Epic), c.Epic, false)
		}
		h.m(` › story`)
	})
	h.title("Story", c.ID, c.Title)
	h.m(`<p class="facts" id="story-facts"`)
	h.a("data-state", c.State.Name)
	h.a("data-done", fmt.Sprint(c.Done))
	h.a("data-total", fmt.Sprint(c.Total))
	h.m(">\n  ")
	h.state(c.State)
	if c.Detail != "" {
		h.m(` <small class="detail">`)
		h.t(firstLine(c.Detail))
		h.m(`</small>`)
	}
	h.m(` · `)
	h.progress(c.Done, c.Total)
	if u := webURL(c.PR); u != "" {
		h.m(` · `)
		h.pr(u, "pull request")
	}
	if c.Worktree != "" {
		h.m(` · worktree <code>`)
		h.t(c.Worktree)
		h.m(`</code>`)
	}
	h.m(` · spend `)
	h.t(money(c.Cost))
	h.m("\n</p>\n")
	// Its next step, the read model's (what status and the lenses offer).
	h.m(`<p class="next" id="story-next"`)
	h.a("data-action", c.Next.Action)
	h.m(`>next: `)
	h.t(c.Next.Text)
	h.m("</p>\n")
	if r := c.Review; r != nil {
		// The review loop as recorded (docs/review.md#in-every-face); its
		// needs-you is the next step's line above, said once.
		h.m(`<p class="review" id="story-review"`)
		h.a("data-requests", fmt.Sprint(r.Requests))
		h.a("data-changes-requested", fmt.Sprint(r.ChangesRequested))
		h.a("data-rounds", fmt.Sprint(r.Rounds))
		h.flag("data-needs-you", r.NeedsYou != "")
		h.m(`>review: `)
		h.t(r.Text())
		h.m("</p>\n")
	}
	h.m("<div class=\"actions\">\n")
	if c.Running {
		h.m(`  <form method="post" class="action"`)
		h.a("action", storyHref(c.Repo, c.ID)+"/stop")
		h.a("data-confirm", fmt.Sprintf("Stop story %s's worker?", c.ID))
		h.m(`>
    <button type="submit" class="danger" id="stop-story">■ Stop</button>
  </form>
`)
	} else {
		switch c.Next.Action {
		case readmodel.NextReview:
		case readmodel.NextAddressReview:
			h.addressReviewForm(c)
		default:
			h.runForm(c)
		}
		if c.Land.Conflict != nil {
			h.resolveForm(c.Repo, c.ID, c.Land.Conflict)
		}
		if c.Land.landable() {
			h.landForm(storyHref(c.Repo, c.ID), fmt.Sprintf("Land story %s: merge its PR once it is ready (its blockers landed)?", c.ID), "land-story")
		}
		if c.LastRun != nil {
			h.m(`  <form method="post" class="action"`)
			h.a("action", storyHref(c.Repo, c.ID)+"/reset")
			h.a("data-confirm", fmt.Sprintf("Reset story %s: remove its worktree, local branch, run records and check results?", c.ID))
			h.m(`>
    <button type="submit" class="danger" id="reset-story">↺ Reset</button>
  </form>
`)
		}
	}
	h.m(`  <a class="button" id="review-story"`)
	h.a("href", storyHref(c.Repo, c.ID)+"/review")
	h.m(">Review (diff)</a>\n</div>\n")
	h.landLine("story-land", c.Land)
	if c.Description != "" || c.Guidance != "" || c.DoneWhen != "" || c.Avoid != "" {
		h.m("<section class=\"about\" aria-labelledby=\"about-h\">\n  <h2 id=\"about-h\">About</h2>\n")
		if c.Description != "" {
			h.m(`  <p class="description pre">`)
			h.lines(c.Description)
			h.m("</p>\n")
		}
		h.m("  <dl>\n")
		h.dt("Guidance", c.Guidance, false)
		h.dt("Done when", c.DoneWhen, false)
		h.dt("Avoid", c.Avoid, false)
		h.m("  </dl>\n</section>\n")
	}
	h.m("<section aria-labelledby=\"tasks-h\">\n  <h2 id=\"tasks-h\">Tasks")
	if c.InWorktree {
		h.m(` <small>(the worktree's copy)</small>`)
	}
	h.m("</h2>\n  <ol class=\"tasklist\" id=\"tasks\">\n")
	for _, t := range c.Tasks {
		h.m(`  <li`)
		h.a("id", "task-"+t.ID)
		h.a("data-task", t.ID)
		h.a("data-status", t.Status.Name)
		h.m(">\n    <details")
		h.a("id", "details-"+t.ID)
		h.m("><summary data-nav><code>#")
		h.t(t.ID)
		h.m(`</code> [`)
		h.state(t.Status)
		h.m(`] `)
		h.t(t.Subject)
		if len(t.BlockedBy) > 0 {
			h.m(` <span class="blocked">`)
			h.t("blocked by #" + strings.Join(t.BlockedBy, ", #"))
			h.m(`</span>`)
		}
		if ch := t.Check; ch != nil {
			if ch.Passed {
				h.m(` <span class="check pass">· ✓ checks</span>`)
			} else {
				h.m(` <span class="check fail">· ✗ check failed: <code>`)
				h.t(ch.Command)
				h.m(`</code> `)
				if ch.TimedOut {
					h.t("(timed out)")
				} else {
					h.tf("(exit status %d)", ch.ExitCode)
				}
				h.m(`</span>`)
			}
		}
		h.m("</summary>\n")
		if t.Broken != "" {
			h.m(`      <p class="broken">⚠ `)
			h.t(t.Broken)
			h.m("</p>\n")
		}
		h.m("      <dl>\n")
		h.dt("Description", t.Description, true)
		h.dt("Active form", t.ActiveForm, false)
		h.dt("Priority", t.Priority, false)
		h.dt("Guidance", t.Guidance, true)
		h.dt("Done when", t.DoneWhen, true)
		if len(t.Checks) > 0 {
			h.m(`<dt>Checks</dt><dd>`)
			for _, cmd := range t.Checks {
				h.m(`<code>`)
				h.t(cmd)
				h.m(`</code><br>`)
			}
			h.m("</dd>\n")
		}
		if t.Check != nil && t.Check.Message != "" {
			h.m(`<dt>Last check output</dt><dd><pre class="out">`)
			h.lines(t.Check.Message)
			h.m("</pre></dd>\n")
		}
		h.m("      </dl>\n    </details>\n  </li>\n")
	}
	if len(c.Tasks) == 0 {
		h.m("  <li class=\"empty\">No tasks.</li>\n")
	}
	h.m("  </ol>\n</section>\n<section aria-labelledby=\"output-h\">\n  <h2 id=\"output-h\">Output")
	if c.Output.Running {
		h.m(` <span class="state st-running"><span class="glyph" aria-hidden="true">●</span> live</span>`)
	}
	h.m("</h2>\n  <div id=\"output-box\"")
	h.a("data-output-url", c.Output.Href)
	h.m(`>`)
	h.output(c.Output)
	h.m(`</div>
</section>
<section aria-labelledby="runs-h">
  <h2 id="runs-h">Runs</h2>
  <table class="runs" data-table="runs">
    <thead><tr><th scope="col">Session</th><th scope="col">Outcome</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Cycles</th><th scope="col">Spend</th></tr></thead>
    <tbody>
`)
	for _, r := range c.Runs {
		h.m(`<tr`)
		h.a("data-session", r.Session)
		h.m(`><th scope="row"><code>`)
		h.t(r.Session)
		h.m(`</code>`)
		if r.DryRun {
			h.m(` <small>(dry run)</small>`)
		}
		h.m(`</th><td>`)
		h.state(stateOf(r.State))
		if r.ExitCode != nil {
			h.m(` <small>`)
			h.tf("exit %d", *r.ExitCode)
			h.m(`</small>`)
		}
		if r.Message != "" {
			h.m(`<pre class="out detail">`)
			h.lines(r.Message)
			h.m(`</pre>`)
		}
		h.m(`</td><td>`)
		h.t(r.Started)
		h.m(`</td><td>`)
		if r.Running {
			h.m(`–`)
		} else {
			h.t(r.Ended)
		}
		h.m(`</td><td>`)
		h.d(r.Cycles)
		h.m(`</td><td>`)
		h.t(money(r.Cost))
		h.m("</td></tr>\n")
	}
	if len(c.Runs) == 0 {
		h.m("<tr><td colspan=\"6\" class=\"empty\">Not run yet.</td></tr>\n")
	}
	h.m("    </tbody>\n  </table>\n</section>\n<section aria-labelledby=\"journal-h\">\n  <h2 id=\"journal-h\">Journal</h2>\n")
	if c.Journal != "" {
		h.m(`<div class="journal">`)
		h.m(c.Journal)
		h.m(`</div>`)
		if c.JournalTruncated {
			h.m(`<p><small>(the first MiB)</small></p>`)
		}
	} else {
		h.m(`<p class="empty">No journal yet.</p>`)
	}
	h.m("\n</section>\n")
}

// dt writes <dt>name</dt><dd>value</dd> when value is set.
func (h *hw) dt(name, value string, pre bool) {
	if value == "" {
		return
	}
	h.m(`<dt>`)
	h.t(name)
	if pre {
		h.m(`</dt><dd class="pre">`)
	} else {
		h.m(`</dt><dd>`)
	}
	h.t(value)
	h.m("</dd>\n")
}

func (h *hw) output(o outputView) {
	h.m(`<div id="output"`)
	h.a("data-running", fmt.Sprint(o.Running))
	h.m(`>`)
	if o.None {
		h.m(`<p class="empty">No output yet.</p>`)
	} else {
		h.m(`<p class="path"><code>`)
		h.t(o.File)
		h.m(`</code>`)
		if o.Truncated {
			h.m(` (its last 64 KiB)`)
		}
		h.m(`</p><pre class="out" tabindex="0" aria-label="Worker output">`)
		h.lines(o.Text)
		h.m(`</pre>`)
	}
	h.m(`</div>`)
}

// ---------------------------------------------------------------------------

// addressReviewForm is the story's "Address review (n)" button: Run's
// start with review=on, a review round on its branch and PR (`run <s>
// --review`).
func (h *hw) addressReviewForm(c storyContent) {
	h.m(`  <form method="post" class="action"`)
	h.a("action", storyHref(c.Repo, c.ID)+"/run")
	h.a("data-confirm", fmt.Sprintf("Address story %s's review: a round on its branch and PR?", c.ID))
	h.m(`>
    <input type="hidden" name="review" value="on">
    <button type="submit" class="primary" id="address-review">`)
	h.t(c.Review.AddressTitle())
	h.m("</button>\n  </form>\n")
}

// runForm is the story's Run button: its next step when that is a run —
// or the opening of its PR, which `run` does without its agent. A
// completed story gets none (`run` would refuse it): its review, and
// `run --again` from a terminal.
func (h *hw) runForm(c storyContent) {
	q, label := fmt.Sprintf("Run story %s?", c.ID), "▶ Run"
	switch {
	case c.Next.Action == readmodel.NextOpenPR:
		q, label = fmt.Sprintf("Open story %s's pull request (its agent does not run again)?", c.ID), "▶ Open PR"
	case c.LastRun != nil:
		q, label = fmt.Sprintf("Run story %s again?", c.ID), "▶ Run again"
	}
	h.m(`  <form method="post" class="action"`)
	h.a("action", storyHref(c.Repo, c.ID)+"/run")
	h.a("data-confirm", q)
	h.m(`>
    <button type="submit" class="primary" id="run-story">`)
	h.t(label)
	h.m(`</button>
    <label class="check"><input type="checkbox" name="dryRun" value="on"`)
	h.flag("checked", c.DryRunDefault)
	h.m(`> dry run (simulated agent)</label>
  </form>
`)
}
