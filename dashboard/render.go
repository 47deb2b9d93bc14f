package dashboard

// The pages' HTML (html.go says how it stays safe): the layout around
// every page, then one function per page.

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// asset is the URL of an embedded asset, with the assets' digest.
func asset(name string) string { return "/assets/" + name + "?v=" + assetVersion() }

// money is a spend in USD, "–" for none.
func money(f float64) string {
	if f == 0 {
		return "–"
	}
	return fmt.Sprintf("$%.2f", f)
}

// bar is done/total as 10 cells of text (a <progress> element per row of
// a long table costs its shadow tree).
func bar(done, total int) string {
	const cells = 10
	n := 0
	if total > 0 {
		n = min(cells, (done*cells+total/2)/total)
		if done > 0 && n == 0 {
			n = 1
		}
	}
	return strings.Repeat("█", n) + strings.Repeat("░", cells-n)
}

// webURL is s when it is a web address (a PR), else "".
func webURL(s string) string {
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s
	}
	return ""
}

func (h *hw) state(st State) {
	h.m(`<span class="state st-`)
	h.t(st.Name)
	h.m(`"><span class="glyph" aria-hidden="true">`)
	h.t(st.Glyph)
	h.m(`</span> `)
	h.t(st.Label)
	h.m(`</span>`)
}

func (h *hw) progress(done, total int) {
	h.m(`<span class="progress"`)
	h.a("data-done", fmt.Sprint(done))
	h.a("data-total", fmt.Sprint(total))
	h.m(`><span class="bar" aria-hidden="true">`)
	h.t(bar(done, total))
	h.m(`</span> `)
	h.tf("%d/%d tasks", done, total)
	h.m(`</span>`)
}

// link writes <a href="href">text</a>, with data-nav when nav.
func (h *hw) link(href, text string, nav bool) {
	h.m(`<a`)
	h.flag("data-nav", nav)
	h.a("href", href)
	h.m(`>`)
	h.t(text)
	h.m(`</a>`)
}

// pr writes a PR: a link when it is a web address, else its text.
func (h *hw) pr(pr, label string) {
	if u := webURL(pr); u != "" {
		h.m(`<a rel="noreferrer noopener" target="_blank"`)
		h.a("href", u)
		h.m(`>`)
		h.t(label)
		h.m(`</a>`)
		return
	}
	h.t(pr)
}

func (h *hw) needsMark(n int) {
	if n > 0 {
		h.m(` <span class="needs-mark" title="needs you">⚠ `)
		h.d(n)
		h.m(`</span>`)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// layout writes the page around content.
func (h *hw) layout(p page, content func()) {
	q := p.Filters.Query()
	h.m("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<title>")
	h.t(p.Title)
	h.m(" · SAGA dashboard</title>\n<link rel=\"stylesheet\"")
	h.a("href", asset("app.css"))
	h.m(">\n<script defer")
	h.a("src", asset("vendor/dagre.min.js"))
	h.m("></script>\n<script defer")
	h.a("src", asset("vendor/morphdom.min.js"))
	h.m("></script>\n<script defer")
	h.a("src", asset("app.js"))
	h.m("></script>\n</head>\n<body")
	h.unsummed(func() { h.a("data-seq", fmt.Sprint(p.Seq)) })
	h.m(">\n<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header class=\"top\">\n  <nav aria-label=\"Pages\">\n    <a class=\"brand\" accesskey=\"h\"")
	h.a("href", "/"+q)
	h.m(">SAGA dashboard</a>\n    <a")
	h.a("href", "/"+q)
	if p.Scope == "home" {
		h.m(` aria-current="page"`)
	}
	h.m(">Backlog</a>\n    <a")
	h.a("href", "/problems"+q)
	if p.Scope == "problems" {
		h.m(` aria-current="page"`)
	}
	h.m(`>Problems `)
	h.partOpen("span", "problem-count")
	h.m(` class="count" id="problem-count">`)
	h.d(p.Problems)
	h.partClose("span")
	h.m("</a>\n  </nav>\n  <form class=\"filters\" method=\"get\" role=\"search\" aria-label=\"Filter\"")
	h.a("action", p.Path)
	h.m(">\n    <label>Text <input type=\"search\" name=\"q\" placeholder=\"id or title  ( / )\" id=\"filter-q\"")
	h.a("value", p.Filters.Q)
	h.m("></label>\n    <label>State <select name=\"state\"><option value=\"\">any</option>")
	for _, name := range p.States {
		st := stateOf(name)
		h.m(`<option`)
		h.a("value", name)
		h.flag("selected", name == p.Filters.State)
		h.m(`>`)
		h.t(st.Glyph + " " + st.Label)
		h.m(`</option>`)
	}
	h.m("</select></label>\n    <label>Epic <select name=\"epic\"><option value=\"\">any</option>")
	for _, e := range p.Epics {
		h.m(`<option`)
		h.flag("selected", e == p.Filters.Epic)
		h.m(`>`)
		h.t(e)
		h.m(`</option>`)
	}
	h.m("</select></label>\n")
	if len(p.Repos) > 1 {
		h.m(`    <label>Repository <select name="repo"><option value="">any</option>`)
		for _, r := range p.Repos {
			h.m(`<option`)
			h.flag("selected", r == p.Filters.Repo)
			h.m(`>`)
			h.t(r)
			h.m(`</option>`)
		}
		h.m("</select></label>\n")
	}
	h.m(`    <label class="check"><input type="checkbox" name="needs" value="1"`)
	h.flag("checked", p.Filters.Needs)
	h.m("> Needs me</label>\n    <button type=\"submit\">Filter</button>\n")
	if q != "" {
		h.m(`    <a`)
		h.a("href", p.Path)
		h.m(">Clear</a>\n")
	}
	h.m("  </form>\n  <span id=\"live\" class=\"live\" role=\"status\" aria-live=\"polite\" data-state=\"connecting\">connecting…</span>\n</header>\n")
	h.partOpen("div", "banners")
	h.m(" id=\"banners\">\n")
	for _, n := range p.Needs {
		h.m(`<div role="alert"`)
		h.a("class", "banner need need-"+n.Kind)
		h.a("data-key", n.Key)
		h.m(`>
  <span class="glyph" aria-hidden="true">⚠</span> <strong>Needs you:</strong> `)
		h.link(n.Href(), n.Text, false)
		if n.Detail != "" {
			h.m(`<pre class="out detail">`)
			h.lines(n.Detail)
			h.m(`</pre>`)
		}
		h.m(`
  <form method="post" action="/ack" class="ack"><input type="hidden" name="key"`)
		h.a("value", n.Key)
		h.m(`><input type="hidden" name="back"`)
		h.a("value", p.Path)
		h.m("><button type=\"submit\">Acknowledge</button></form>\n</div>\n")
	}
	h.partClose("div")
	h.m("\n<main id=\"main\" tabindex=\"-1\"")
	h.a("data-scope", p.Scope)
	h.a("data-repo", p.ScopeRepo)
	h.a("data-id", p.ScopeID)
	h.a("data-stories", p.ScopeStories)
	h.m(">\n")
	content()
	h.m(`
</main>
<div id="toast" role="status" aria-live="polite"></div>
<dialog id="confirm" aria-labelledby="confirm-q">
  <form method="dialog">
    <p id="confirm-q"></p>
    <menu><button value="cancel" id="confirm-cancel">Cancel</button> <button value="ok" id="confirm-ok" class="primary">Confirm</button></menu>
  </form>
</dialog>
<dialog id="help" aria-labelledby="help-title">
  <h2 id="help-title">Keyboard</h2>
  <dl>
    <dt><kbd>/</kbd></dt><dd>filter by text</dd>
    <dt><kbd>j</kbd> <kbd>k</kbd></dt><dd>next, previous row or graph node</dd>
    <dt><kbd>Enter</kbd></dt><dd>open it</dd>
    <dt><kbd>g</kbd> then <kbd>h</kbd> / <kbd>p</kbd></dt><dd>backlog / problems</dd>
    <dt><kbd>Alt</kbd>+<kbd>←</kbd></dt><dd>back</dd>
    <dt><kbd>?</kbd></dt><dd>this help</dd>
  </dl>
  <form method="dialog"><button>Close</button></form>
</dialog>
`)
	h.partsElement()
	h.m("</body>\n</html>\n")
}

// ---------------------------------------------------------------------------

func (h *hw) message(c message) {
	h.m(`<h1>`)
	h.t(c.Title)
	h.m(`</h1>`)
	h.m("\n<p")
	if c.OK {
		h.m(` class="message"`)
	} else {
		h.m(` class="message refused"`)
	}
	h.m(`>`)
	h.t(c.Text)
	h.m("</p>\n<p>")
	h.link(c.Back, "Back", false)
	h.m("</p>\n")
}

func (h *hw) confirm(c confirmContent) {
	h.m("<h1>Confirm</h1>\n<form method=\"post\" class=\"confirm-page\"")
	h.a("action", c.Action)
	h.m(">\n  <p>")
	h.t(c.Question)
	h.m("</p>\n")
	for _, k := range slices.Sorted(maps.Keys(c.Fields)) {
		h.m(`  <input type="hidden"`)
		h.a("name", k)
		h.a("value", c.Fields[k])
		h.m(">\n")
	}
	h.m("  <input type=\"hidden\" name=\"confirm\" value=\"yes\">\n  <button type=\"submit\" class=\"primary\">Confirm</button> ")
	h.link(c.Back, "Cancel", false)
	h.m("\n</form>\n")
}

// ---------------------------------------------------------------------------

func (h *hw) home(p page, c homeContent) {
	h.m("<h1>Backlog</h1>\n")
	for _, r := range c.Repos {
		h.m(`<section class="repo"`)
		h.a("aria-labelledby", "repo-"+r.Key)
		h.m(">\n  <h2")
		h.a("id", "repo-"+r.Key)
		h.m(`>`)
		h.t(r.Key)
		h.m(` <small class="path">`)
		h.t(r.Root)
		h.m("</small></h2>\n  ")
		h.partOpen("p", "summary "+r.Key)
		h.m(` class="summary">`)
		h.tf("%d %s · %d %s · ", r.StoryCount, plural(r.StoryCount, "story", "stories"), r.EpicCount, plural(r.EpicCount, "epic", "epics"))
		h.m(`<a`)
		h.a("href", "/problems?repo="+url.QueryEscape(r.Key))
		h.m(`>`)
		if r.Errors+r.Warnings > 0 {
			h.m(`<span class="state st-failed"><span class="glyph" aria-hidden="true">⚠</span> `)
			h.tf("%d errors, %d warnings", r.Errors, r.Warnings)
			h.m(`</span>`)
		} else {
			h.m(`no problems`)
		}
		h.m("</a>")
		h.partClose("p")
		h.m("\n")
		h.m(`  <table class="epics" data-table="epics">
    <caption>Epics</caption>
    <thead><tr><th scope="col">Epic</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Stories</th><th scope="col">Running</th><th scope="col">Held</th><th scope="col">Failed</th><th scope="col">Spend</th></tr></thead>
    <tbody>
`)
		for _, e := range r.Epics {
			h.partOpen("tr", "epic "+r.Key+" "+e.ID)
			h.m(` data-row`)
			h.a("data-id", e.ID)
			h.a("data-state", e.State.Name)
			h.m(`><th scope="row">`)
			h.link(e.Href(), e.ID, true)
			h.m(` <span class="title">`)
			h.t(e.Title)
			h.m(`</span>`)
			h.needsMark(e.Needs)
			h.m(`</th><td>`)
			h.state(e.State)
			h.m(`</td><td>`)
			h.progress(e.Done, e.Total)
			h.m(`</td><td>`)
			h.tf("%d/%d", e.StoriesDone, e.Stories)
			h.m(`</td><td>`)
			h.t(count("●", e.Running))
			h.m(`</td><td>`)
			h.t(count("‖", e.Held))
			h.m(`</td><td>`)
			h.t(count("✗", e.Failed))
			h.m(`</td><td>`)
			h.t(money(e.Cost))
			h.m("</td>")
			h.partClose("tr")
			h.m("\n")
		}
		if len(r.Epics) == 0 {
			h.m(`<tr><td colspan="8" class="empty">No epic`)
			if p.Filters.Query() != "" {
				h.m(` matches the filter`)
			}
			h.m(".</td></tr>\n")
		}
		h.m("    </tbody>\n  </table>\n  <table class=\"stories\" data-table=\"stories\">\n    <caption>")
		h.t(r.StoriesCaption)
		h.m(`</caption>
    <thead><tr><th scope="col">Story</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Epic</th><th scope="col">PR</th><th scope="col">Spend</th></tr></thead>
    <tbody>
`)
		for _, s := range r.Stories {
			h.partOpen("tr", "story "+r.Key+" "+s.ID)
			h.m(` data-row`)
			h.a("data-id", s.ID)
			h.a("data-state", s.State.Name)
			h.m(`><th scope="row">`)
			h.link(s.Href(), s.ID, true)
			h.m(` <span class="title">`)
			h.t(s.Title)
			h.m(`</span>`)
			h.needsMark(s.Needs)
			h.m(`</th><td>`)
			h.state(s.State)
			if s.Detail != "" {
				h.m(` <small class="detail">`)
				h.t(firstLine(s.Detail))
				h.m(`</small>`)
			}
			h.m(`</td><td>`)
			h.progress(s.Done, s.Total)
			h.m(`</td><td>`)
			h.t(s.Epic)
			h.m(`</td><td>`)
			h.pr(s.PR, "PR")
			h.m(`</td><td>`)
			h.t(money(s.Cost))
			h.m("</td>")
			h.partClose("tr")
			h.m("\n")
		}
		if len(r.Stories) == 0 {
			h.m(`<tr><td colspan="6" class="empty">No story`)
			if p.Filters.Query() != "" {
				h.m(` matches the filter`)
			}
			h.m(".</td></tr>\n")
		}
		h.m("    </tbody>\n  </table>\n</section>\n")
	}
	h.m(`<p class="rows" hidden`)
	h.a("data-rows", fmt.Sprint(c.Rows))
	h.m("></p>\n")
}

// count is "● 2", or "0".
func count(glyph string, n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%s %d", glyph, n)
}

// ---------------------------------------------------------------------------

func (h *hw) problems(p page, c problemsContent) {
	h.m("<h1>Problems</h1>\n<p class=\"summary\">")
	h.tf("%d findings of ", c.Total)
	h.m(`<code>saga-lsp check</code>`)
	if c.Clipped {
		h.tf(" (the first %d shown: filter to narrow)", len(c.Rows))
	}
	h.m(`.</p>
<table class="problems" data-table="problems">
  <thead><tr><th scope="col">File</th><th scope="col">Line</th><th scope="col">Severity</th><th scope="col">Code</th><th scope="col">Message</th><th scope="col">Quick fix</th></tr></thead>
  <tbody>
`)
	for _, r := range c.Rows {
		h.m(`<tr data-row`)
		h.a("data-code", r.Code)
		h.m(`><th scope="row">`)
		if r.Href != "" {
			h.link(r.Href, r.File, true)
		} else {
			h.t(r.File)
		}
		h.m(` <small class="repo-tag">`)
		h.t(r.Repo)
		h.m(`</small></th><td>`)
		h.tf("%d:%d", r.Line, r.Col)
		h.m(`</td><td>`)
		h.m(`<span`)
		h.a("class", "sev sev-"+r.Severity)
		h.m(`>`)
		switch r.Severity {
		case "error":
			h.m(`✗ `)
		case "warning":
			h.m(`⚠ `)
		default:
			h.m(`ℹ `)
		}
		h.t(r.Severity)
		h.m(`</span></td><td><code>`)
		h.t(r.Code)
		h.m(`</code></td><td>`)
		h.t(r.Message)
		h.m(`</td><td>`)
		for i, f := range r.Fixes {
			if i > 0 {
				h.m(`<br>`)
			}
			h.m(`<span class="fix">`)
			h.t(f)
			h.m(`</span>`)
		}
		if len(r.Fixes) == 0 {
			h.m(`–`)
		}
		h.m("</td></tr>\n")
	}
	if len(c.Rows) == 0 {
		h.m(`<tr><td colspan="6" class="empty">No problems`)
		if p.Filters.Query() != "" {
			h.m(` match the filter`)
		}
		h.m(".</td></tr>\n")
	}
	h.m("  </tbody>\n</table>\n")
}

// ---------------------------------------------------------------------------

func (h *hw) crumbs(p page, repo string, rest func()) {
	h.m(`<nav class="crumbs" aria-label="Breadcrumbs">`)
	h.link("/"+p.Filters.Query(), "Backlog", false)
	h.m(` › <span>`)
	h.t(repo)
	h.m(`</span>`)
	rest()
	h.m("</nav>\n")
}

func (h *hw) title(kind, id, title string) {
	h.m(`<h1><span class="kind">`)
	h.t(kind)
	h.m(`</span> `)
	h.t(id)
	h.m(` <span class="title">`)
	h.t(title)
	h.m("</span></h1>\n")
}

func (h *hw) epic(p page, c epicContent) {
	h.crumbs(p, c.Repo, func() { h.m(` › epic`) })
	h.title("Epic", c.ID, c.Title)
	h.partOpen("p", "facts")
	h.m(` class="facts" id="epic-facts"`)
	h.a("data-state", c.State.Name)
	h.m(">\n  ")
	h.state(c.State)
	h.m(` · <span`)
	h.a("data-stories-done", fmt.Sprint(c.StoriesDone))
	h.m(`>`)
	h.tf("%d/%d stories", c.StoriesDone, c.Stories)
	h.m(`</span> · `)
	h.tf("%d/%d tasks · %d running · spend %s", c.Done, c.Total, c.Running, money(c.Cost))
	if c.CapReached {
		h.m(` <strong class="state st-held">cost cap (--max-cost) reached</strong>`)
	}
	if c.MaxParallel > 0 {
		h.tf(" · at most %d at once", c.MaxParallel)
	}
	if c.Session != "" {
		h.m(` · run <code>`)
		h.t(c.Session)
		h.m(`</code>`)
		if !c.RunnerAlive && c.Status != nil {
			h.tf(" ended %s", c.Status.State)
		}
	}
	h.m("\n")
	h.partClose("p")
	h.m("\n")
	if c.Description != "" {
		h.m(`<p class="description">`)
		h.t(c.Description)
		h.m("</p>\n")
	}
	h.partOpen("div", "actions")
	h.m(" class=\"actions\">\n")
	if c.RunnerAlive {
		h.m(`  <form method="post" class="action"`)
		h.a("action", epicHref(c.Repo, c.ID)+"/stop")
		h.a("data-confirm", fmt.Sprintf("Stop epic %s's runner and every worker it started?", c.ID))
		h.m(`>
    <button type="submit" class="danger" id="stop-epic">■ Stop epic</button>
  </form>
`)
	} else {
		h.m(`  <form method="post" class="action"`)
		h.a("action", epicHref(c.Repo, c.ID)+"/run")
		h.a("data-confirm", fmt.Sprintf("Run epic %s?", c.ID))
		h.m(`>
    <button type="submit" class="primary" id="run-epic">▶ Run epic</button>
    <label>max parallel <input type="number" name="maxParallel" min="1" max="64" placeholder="3" size="3"></label>
    <label>max cost $ <input type="number" name="maxCost" min="0" step="0.01" placeholder="none" size="6"></label>
    <label class="check"><input type="checkbox" name="dryRun" value="on"> dry run (simulated agent)</label>
  </form>
`)
	}
	if c.Landable {
		h.landForm(epicHref(c.Repo, c.ID), fmt.Sprintf("Land epic %s: merge its stories' PRs that are ready, in dependency order?", c.ID), "land-epic")
	}
	h.partClose("div")
	h.m("\n<figure class=\"graph-box\">\n  ")
	h.partOpen("div", "graph")
	h.m(` id="graph" class="graph" role="group"`)
	h.aq("data-graph", c.Graph)
	h.a("aria-label", "Dependency graph of epic "+c.ID+": each story a link")
	h.m(">")
	h.partClose("div")
	h.m("\n  ")
	h.partOpen("figcaption", "legend")
	h.m(" class=\"legend\">\n    Arrows run from a blocker to what it blocks. <span class=\"crit-key\">Thick blue</span>: ")
	if len(c.Critical) > 0 {
		h.t("the critical path (" + plan.Stories().Count(len(c.Critical)) + ": " + strings.Join(c.Critical, " → ") + ")")
	} else {
		h.t("the critical path (none: no unfinished story outside a cycle)")
	}
	h.m(`.
    Dashed red: a cycle. Faded: not matching the filter.
  `)
	h.partClose("figcaption")
	h.m(`
</figure>
<table class="stories" data-table="epic-stories">
  <caption>Stories of `)
	h.t(c.ID)
	h.m(`, in plan order</caption>
  <thead><tr><th scope="col">Story</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">PR</th><th scope="col">Checks</th><th scope="col">Spend</th><th scope="col">Branch</th></tr></thead>
  <tbody>
`)
	for _, r := range c.Rows {
		h.partOpen("tr", "row "+r.ID)
		h.m(` data-row`)
		h.a("data-id", r.ID)
		h.a("data-state", r.State.Name)
		if !r.Match {
			h.m(` class="unmatched"`)
		}
		h.m(`><th scope="row">`)
		if r.Exists {
			h.link(r.Href(), r.ID, true)
		} else {
			h.t(r.ID)
		}
		if r.Critical {
			h.m(` <span class="crit" title="on the critical path">◆</span>`)
		}
		h.m(` <span class="title">`)
		h.t(r.Title)
		h.m(`</span>`)
		h.needsMark(r.Needs)
		h.m(`</th><td>`)
		h.state(r.State)
		switch {
		case len(r.HeldBy) > 0:
			h.m(` <small class="detail">`)
			h.t("by " + strings.Join(r.HeldBy, ", "))
			if len(r.Conflicts) > 0 {
				h.t(" · conflicts: " + strings.Join(r.Conflicts, ", "))
			}
			h.m(`</small>`)
		case r.Detail != "":
			h.m(` <small class="detail">`)
			h.t(firstLine(r.Detail))
			h.m(`</small>`)
		}
		if state, text := r.Land.words(); r.Land.Landed || r.Land.Land != nil {
			h.m(` <small class="land"`)
			h.a("data-land", state)
			h.m(`>land: `)
			h.t(firstLine(text))
			h.m(`</small>`)
		}
		if a := r.Actions; a != nil {
			h.m(` <small class="detail">`)
			if webURL(a.URL) != "" {
				h.pr(a.URL, "GitHub Actions: "+a.State())
			} else {
				h.t("GitHub Actions: " + a.State())
			}
			h.m(`</small>`)
		}
		h.m(`</td><td>`)
		h.progress(r.Done, r.Total)
		h.m(`</td><td>`)
		h.pr(r.PR, "PR")
		h.m(`</td><td>`)
		h.t(r.Checks)
		h.m(`</td><td>`)
		h.t(money(r.Cost))
		h.m(`</td><td>`)
		if r.Branch != "" {
			h.m(`<code>`)
			h.t(r.Branch)
			h.m(`</code>`)
		}
		h.m("</td>")
		h.partClose("tr")
		h.m("\n")
	}
	h.m("  </tbody>\n</table>\n")
	h.outcome(c.Outcome)
}

// ---------------------------------------------------------------------------

func (h *hw) review(p page, c reviewContent) {
	h.crumbs(p, c.Repo, func() {
		h.m(` › `)
		h.link(storyHref(c.Repo, c.Story), c.Story, false)
		h.m(` › review`)
	})
	h.title("Review", c.Story, "")
	if c.Error != "" {
		h.m(`<p class="message refused" role="alert">`)
		h.t(c.Error)
		h.m("</p>\n")
	}
	if c.Branch == "" {
		return
	}
	h.m(`<p class="facts"><code>`)
	h.t(c.Branch)
	h.m(`</code> against <code>`)
	h.t(c.Base)
	h.m(`</code> · `)
	h.tf("%d files changed", len(c.Files))
	if c.Protected > 0 {
		h.m(` · <span class="state st-held"><span class="glyph" aria-hidden="true">⚠</span> `)
		h.tf("%d protected", c.Protected)
		h.m(`</span>`)
	}
	if c.Worktree != "" {
		h.m(` · worktree <code>`)
		h.t(c.Worktree)
		h.m(`</code>`)
	}
	h.m(`</p>
<table class="files" data-table="files">
  <thead><tr><th scope="col">File</th><th scope="col">Change</th><th scope="col">Protected</th></tr></thead>
  <tbody>
`)
	for _, f := range c.Files {
		h.m(`<tr data-row`)
		if f.Selected {
			h.m(` aria-current="true"`)
		}
		h.m(`><th scope="row">`)
		h.link(f.Href, f.Path, true)
		if f.OldPath != "" {
			h.m(` <small>from `)
			h.t(f.OldPath)
			h.m(`</small>`)
		}
		h.m(`</th><td>`)
		h.t(f.Status)
		h.m(`</td><td>`)
		if f.Protected != "" {
			h.m(`<span class="state st-held"><span class="glyph" aria-hidden="true">⚠</span> `)
			h.t(f.Protected)
			h.m(`</span>`)
		}
		h.m("</td></tr>\n")
	}
	if len(c.Files) == 0 {
		h.m("<tr><td colspan=\"3\" class=\"empty\">The branch changes nothing yet.</td></tr>\n")
	}
	h.m("  </tbody>\n</table>\n")
	if c.Selected != "" {
		h.m(`<h2>`)
		h.t(c.Selected)
		h.m("</h2>\n<pre class=\"diff\" tabindex=\"0\">")
		for _, l := range c.Diff {
			h.m(`<span`)
			h.a("class", l.Class)
			h.m(`>`)
			h.t(l.Text)
			h.m("</span>\n")
		}
		h.m(`</pre>`)
		if c.DiffTruncated {
			h.m(`<p><small>(the first MiB)</small></p>`)
		}
		h.m("\n")
		h.reviewCommentForm(c)
	}
}

// reviewCommentForm makes a comment on the shown file a review task of the
// story (docs/review.md#a-review-without-github): its next round addresses
// it like a thread's.
func (h *hw) reviewCommentForm(c reviewContent) {
	h.m(`<form method="post" class="review-comment" id="review-comment"`)
	h.a("action", storyHref(c.Repo, c.Story)+"/comment")
	h.m(`>
  <input type="hidden" name="path"`)
	h.a("value", c.Selected)
	h.m(`>
  <label>Line <input type="number" name="line" min="0" value="0" inputmode="numeric"></label>
  <label>Comment <textarea name="body" rows="3" required></textarea></label>
  <button type="submit">Add as a review task</button>
</form>
`)
}
