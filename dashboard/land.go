package dashboard

// The Land and Resolve actions (docs/landing.md#in-the-dashboard-and-the-editors):
// Land runs one pass of runs/land — `saga-lsp land <story|epic>`
// without --watch — in the dashboard's process and answers what it did;
// Resolve starts a story's run on its conflict-resolution task
// (control.Resolve, `land --resolve`). The land state beside the button is
// the read model's, never asked of GitHub to draw a page.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// landTimeout bounds a Land action: a pass may rebuild dependents on the
// default branch and run their checks.
const landTimeout = 15 * time.Minute

// errLandBusy refuses a second Land while one runs in the repository: two
// passes would judge and merge the same stories.
var errLandBusy = errors.New("a Land already runs in this repository: its answer says what it did")

// landView is a story's landing as the read model has it.
type landView struct {
	PR       string
	Landed   bool
	Land     *runs.LandRecord    // why land last stopped it
	Conflict *readmodel.Conflict // its open conflict-resolution task
}

// landable tells whether Land has something to do for it: a PR not
// landed.
func (l landView) landable() bool { return l.PR != "" && !l.Landed }

// landOf is the story's landing: its epic's word on it when its epic ran,
// else its own.
func (v *repoView) landOf(id string) landView {
	if es := v.epicStory[id]; es != nil && es.State != "" {
		return landView{PR: es.PR, Landed: es.PRState == runs.PRMerged, Land: es.Land, Conflict: es.Conflict}
	}
	m := v.model(id)
	return landView{PR: m.PR, Landed: m.PRState == runs.PRMerged, Land: m.Land, Conflict: m.Conflict}
}

// words is the land state in a word (data-land) and in words.
func (l landView) words() (state, text string) {
	switch {
	case l.Landed:
		return land.Landed, "landed: its PR is merged"
	case l.Land != nil:
		return l.Land.State, l.Land.State + ": " + l.Land.Why
	case l.PR != "":
		return "unlanded", "not landed: Land (`saga-lsp land`) merges it once it is ready"
	}
	return "", ""
}

// landLine is the land state beside the button.
func (h *hw) landLine(id string, l landView) {
	state, text := l.words()
	if state == "" {
		return
	}
	h.m(`<p class="land"`)
	h.a("id", id)
	h.a("data-land", state)
	h.m(`>land: `)
	h.t(text)
	h.m("</p>\n")
}

// landForm is a Land button: POST <href>/land.
func (h *hw) landForm(href, question, id string) {
	h.m(`  <form method="post" class="action"`)
	h.a("action", href+"/land")
	h.a("data-confirm", question)
	h.m(`>
    <button type="submit" class="primary"`)
	h.a("id", id)
	h.m(">⇣ Land</button>\n  </form>\n")
}

// resolveForm is a story's Resolve button: POST …/resolve.
func (h *hw) resolveForm(repo, story string, c *readmodel.Conflict) {
	h.m(`  <form method="post" class="action"`)
	h.a("action", storyHref(repo, story)+"/resolve")
	h.a("data-confirm", fmt.Sprintf("Start story %s's run on its conflict task %s (conflicts in %s)?", story, c.Task, strings.Join(c.Files, ", ")))
	h.m(`>
    <button type="submit" class="primary" id="resolve-story">Resolve conflict</button>
  </form>
`)
}

// landAction is POST …/story/{id}/land and …/epic/{id}/land: one land
// pass over the story (with its blockers) or the epic's stories.
func (s *Server) landAction(w http.ResponseWriter, r *http.Request, rp *repo, id string, epic bool, back string) {
	what := "story " + id
	if epic {
		what = "epic " + id + "'s stories"
	}
	if !s.confirmed(w, r, fmt.Sprintf("Land %s: merge what is ready, in dependency order?", what), back) {
		return
	}
	if !rp.landing.CompareAndSwap(false, true) {
		s.answer(w, r, actionResult{}, errLandBusy, back)
		return
	}
	defer rp.landing.Store(false)
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(landTimeout + time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), landTimeout) // not the request's: a closed tab does not cut a merge
	defer cancel()
	res, err := land.Land(ctx, land.Options{Setup: rp.setup, Target: id, Epic: epic, Workspace: rp.src.Workspace(), Parser: s.parser})
	ar := actionResult{}
	if res != nil {
		ar.Message = landMessage(what, res)
		s.log.Info("dashboard: land", "target", id, "epic", epic, "actions", len(res.Actions))
	}
	s.hub.notify(Change{Root: rp.src.Root, All: true})
	s.answer(w, r, ar, err, back)
}

// landMessage says what a pass did and where each story stands.
func landMessage(what string, res *land.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Landed %s with %s:", what, cmpOr(res.Method, "no merge method (no pull request read)"))
	if len(res.Actions) == 0 {
		b.WriteString(" nothing to do now.")
	}
	for _, a := range res.Actions {
		fmt.Fprintf(&b, "\n%s %s: %s", a.Did, a.Story, a.Detail)
	}
	for _, o := range res.Stories {
		fmt.Fprintf(&b, "\n%s: %s", o.Story, o.State)
		if o.Why != "" {
			b.WriteString(" — " + o.Why)
		}
		if o.Next != "" {
			b.WriteString("; next: " + o.Next)
		}
	}
	return b.String()
}

// resolveAction is POST …/story/{id}/resolve: the story's run on its
// conflict task, followed as any run.
func (s *Server) resolveAction(w http.ResponseWriter, r *http.Request, rp *repo, id, back string) {
	if !s.confirmed(w, r, fmt.Sprintf("Start story %s's run on its conflict-resolution task?", id), back) {
		return
	}
	ctx, cancel := actionContext()
	defer cancel()
	st, err := control.Resolve(ctx, control.RunOptions{Setup: rp.setup, Story: id, Parser: s.parser})
	res := actionResult{}
	if err == nil {
		res = s.followed(rp, st, fmt.Sprintf("Started story %s on its conflict task in tmux session %s (attach: %s); Land lands it once it is ready", id, st.Session, st.Attach))
		s.log.Info("dashboard: resolve story", "story", id, "session", st.Session, "pid", st.PID)
	}
	s.answer(w, r, res, err, back)
}
