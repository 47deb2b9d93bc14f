package dashboard

// The actions: Run and Stop of a story or an epic (Run again is Run on a
// story that ran; Address review is Run with review=on: `run --review`), each the runs/control call `saga-lsp run`/`stop` and
// the language server's runStory, stopStory, runEpic and stopEpic make;
// Reset of a story's local attempt, the call `saga-lsp reset <story>
// --yes` makes (never --remote from a page);
// Land and Resolve (land.go); and acknowledging what needed the user. Each is a same-origin POST
// (security.go) confirmed in the page: the page's script asks in a dialog
// and sends confirm=yes; without a script the POST answers with a
// confirmation page whose button sends it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store"
)

// actionTimeout bounds an action: a start waits for its worker or runner
// to take its lock, a stop for its clean-up.
const actionTimeout = 2 * time.Minute

// confirmContent is the confirmation page of an action sent without the
// page's script.
type confirmContent struct {
	Question, Action, Back string
	Fields                 map[string]string
}

// actionResult is what an action answers the page's script.
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Session string `json:"session,omitempty"`
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// form parses a POST's small form body.
func form(w http.ResponseWriter, r *http.Request) bool { return true }

// confirmed tells whether the action was confirmed; if not, it answers
// with the confirmation (a page, or 428 to a script).
func (s *Server) confirmed(w http.ResponseWriter, r *http.Request, question, back string) bool {
	if r.PostForm.Get("confirm") == "yes" {
		return true
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusPreconditionRequired, actionResult{Message: "not confirmed: send confirm=yes"})
		return false
	}
	fields := map[string]string{}
	for k, vs := range r.PostForm {
		if k != "confirm" && len(vs) > 0 {
			fields[k] = vs[0]
		}
	}
	p := s.base(r, "Confirm", "message", s.views())
	p.Content = confirmContent{Question: question, Action: r.URL.Path, Back: back, Fields: fields}
	s.render(w, http.StatusOK, p, func(h *hw) { h.confirm(p.Content.(confirmContent)) })
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// answer reports an action's outcome: JSON to the page's script, a page
// otherwise.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, res actionResult, err error, back string) {
	status := http.StatusOK
	if err != nil {
		res.OK, res.Message = false, err.Error()
		var ue *store.UsageError
		var re *control.RunningError
		var nc *control.NoConflictError
		switch {
		case errors.As(err, &ue):
			status = http.StatusBadRequest
		case errors.As(err, &re), errors.As(err, &nc), errors.Is(err, errLandBusy):
			status = http.StatusConflict
		default:
			status = http.StatusInternalServerError
			var se *control.StartError
			if errors.As(err, &se) && strings.TrimSpace(se.Output) != "" {
				out := se.Output
				if len(out) > 2000 {
					out = "…" + out[len(out)-2000:]
				}
				res.Message += "\n" + out
			}
		}
	} else {
		res.OK = true
	}
	if wantsJSON(r) {
		writeJSON(w, status, res)
		return
	}
	p := s.base(r, "Result", "message", s.views())
	p.Content = message{Title: map[bool]string{true: "Done", false: "Refused"}[res.OK], Text: res.Message, Back: back, OK: res.OK}
	s.render(w, status, p, func(h *hw) { h.message(p.Content.(message)) })
}

func formBool(r *http.Request, name string) bool {
	switch r.PostForm.Get(name) {
	case "on", "1", "true", "yes":
		return true
	}
	return false
}

func actionContext() (context.Context, context.CancelFunc) {
	// Not the request's: a start must not be cut half-way by a closed tab.
	return context.WithTimeout(context.Background(), actionTimeout)
}

// storyAction is POST /r/{repo}/story/{id}/{run|stop|reset|comment|land|resolve}.
func (s *Server) storyAction(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil || !form(w, r) {
		return
	}
	id, op := r.PathValue("id"), r.PathValue("op")
	back := storyHref(rp.key, id)
	if !store.ValidCanonical(id) || rp.src.Workspace().Story(id) == nil {
		s.answer(w, r, actionResult{}, store.Usagef("no story %q in %s", id, rp.key), "/")
		return
	}
	dry, round := formBool(r, "dryRun"), formBool(r, "review")
	switch op {
	case "run":
		q := fmt.Sprintf("Run story %s?", id)
		switch {
		case round:
			q = fmt.Sprintf("Address story %s's review: a round on its branch and PR?", id)
		case dry:
			q = fmt.Sprintf("Run story %s with the simulated agent (dry run)?", id)
		}
		if !s.confirmed(w, r, q, back) {
			return
		}
		ctx, cancel := actionContext()
		defer cancel()
		st, err := control.StartStory(ctx, control.RunOptions{Setup: rp.setup, Story: id, Worker: runs.WorkerFlags{DryRun: dry, Review: round},
			Parser: s.parser})
		res := actionResult{}
		if err == nil {
			res = s.followed(rp, st, fmt.Sprintf("Started story %s in tmux session %s (attach: %s)", id, st.Session, st.Attach))
			if st.Finished {
				res.Message = fmt.Sprintf("Story %s ran and completed at once (session %s)", id, st.Session)
			}
			s.log.Info("dashboard: run story", "story", id, "session", st.Session, "pid", st.PID)
		}
		s.answer(w, r, res, err, back)
	case "land":
		s.landAction(w, r, rp, id, false, back)
	case "resolve":
		s.resolveAction(w, r, rp, id, back)
	case "comment":
		// A review without GitHub (docs/review.md#a-review-without-github):
		// a comment on the story's review diff becomes a review task.
		line, err := strconv.Atoi(cmpOr(strings.TrimSpace(r.PostForm.Get("line")), "0"))
		if err != nil {
			s.answer(w, r, actionResult{}, store.Usagef("line %q: a line number, or 0 for the whole file", r.PostForm.Get("line")), back+"/review")
			return
		}
		path := r.PostForm.Get("path")
		ctx, cancel := actionContext()
		defer cancel()
		res, err := review.FromEditor(ctx, s.parser, rp.src.Root, review.EditorComment{Story: id, Path: path, Line: line, Body: r.PostForm.Get("body"),
			Author: cmpOr(s.env("USER"), s.env("USERNAME"))}, time.Now())
		ar := actionResult{}
		if err == nil {
			ar.Message = fmt.Sprintf("Review task %s of story %s: its next round (Address review) takes it", res.Task, id)
			if !res.Created {
				ar.Message = fmt.Sprintf("The same comment is already review task %s of story %s", res.Task, id)
			}
			s.log.Info("dashboard: review comment", "story", id, "task", res.Task, "created", res.Created)
		}
		s.answer(w, r, ar, err, back+"/review?file="+url.QueryEscape(path))
	case "stop":
		if !s.confirmed(w, r, fmt.Sprintf("Stop story %s's worker?", id), back) {
			return
		}
		ctx, cancel := actionContext()
		defer cancel()
		res, err := control.StopStory(ctx, control.StopOptions{Setup: rp.setup, Story: id})
		ar := actionResult{}
		if err == nil {
			ar.Message = fmt.Sprintf("Stopped story %s (%s)", id, res.State)
			s.log.Info("dashboard: stop story", "story", id)
		}
		s.answer(w, r, ar, err, back)
	case "reset":
		if !s.confirmed(w, r, fmt.Sprintf("Reset story %s: remove its worktree, local branch, run records and check results (docs/commands.md#reset)?", id), back) {
			return
		}
		ctx, cancel := actionContext()
		defer cancel()
		res, err := control.Reset(ctx, control.ResetOptions{Setup: rp.setup, Story: id, Yes: true, Parser: s.parser})
		ar := actionResult{}
		if err == nil {
			ar.Message = fmt.Sprintf("Reset story %s: %d removed, %d kept", id, len(res.Items)-res.Kept(), res.Kept())
			s.log.Info("dashboard: reset story", "story", id)
		}
		s.answer(w, r, ar, err, back)
	default:
		s.notFound(w, r, fmt.Sprintf("no action %q for a story", op))
	}
}

// epicAction is POST /r/{repo}/epic/{id}/{run|stop|land}.
func (s *Server) epicAction(w http.ResponseWriter, r *http.Request) {
	rp := s.repoOf(w, r)
	if rp == nil || !form(w, r) {
		return
	}
	id, op := r.PathValue("id"), r.PathValue("op")
	back := epicHref(rp.key, id)
	if !store.ValidCanonical(id) || rp.src.Workspace().Epic(id) == nil {
		s.answer(w, r, actionResult{}, store.Usagef("no epic %q in %s", id, rp.key), "/")
		return
	}
	switch op {
	case "run":
		dry := formBool(r, "dryRun")
		flags := runs.EpicFlags{}
		if v := strings.TrimSpace(r.PostForm.Get("maxParallel")); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				s.answer(w, r, actionResult{}, store.Usagef("--max-parallel must be a whole number ≥ 1, got %q", v), back)
				return
			}
			flags.MaxParallel = n
		}
		if v := strings.TrimSpace(r.PostForm.Get("maxCost")); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				s.answer(w, r, actionResult{}, store.Usagef("--max-cost must be a number of USD ≥ 0, got %q", v), back)
				return
			}
			flags.MaxCost = f
		}
		q := fmt.Sprintf("Run epic %s", id)
		if flags.MaxParallel > 0 {
			q += fmt.Sprintf(", %d stories at once", flags.MaxParallel)
		}
		if flags.MaxCost > 0 {
			q += fmt.Sprintf(", at most $%g", flags.MaxCost)
		}
		if dry {
			q += ", with the simulated agent (dry run)"
		}
		if !s.confirmed(w, r, q+"?", back) {
			return
		}
		ctx, cancel := actionContext()
		defer cancel()
		st, err := control.StartEpic(ctx, control.EpicRunOptions{Setup: rp.setup, Epic: id, Flags: flags,
			Worker: runs.WorkerFlags{DryRun: dry}})
		res := actionResult{}
		if err == nil {
			if rp.src.Watcher != nil {
				rp.src.Watcher.FollowEpic(st)
			}
			res.Session = st.Session
			res.Message = fmt.Sprintf("Started epic %s in tmux session %s", id, st.Session)
			s.log.Info("dashboard: run epic", "epic", id, "session", st.Session, "pid", st.PID)
		}
		s.answer(w, r, res, err, back)
	case "land":
		s.landAction(w, r, rp, id, true, back)
	case "stop":
		if !s.confirmed(w, r, fmt.Sprintf("Stop epic %s's runner and every worker it started?", id), back) {
			return
		}
		ctx, cancel := actionContext()
		defer cancel()
		res, err := control.StopEpic(ctx, control.StopOptions{Setup: rp.setup, Story: id})
		ar := actionResult{}
		if err == nil {
			ar.Message = fmt.Sprintf("Stopped epic %s (%s)", id, res.State)
			s.log.Info("dashboard: stop epic", "epic", id)
		}
		s.answer(w, r, ar, err, back)
	default:
		s.notFound(w, r, fmt.Sprintf("no action %q for an epic", op))
	}
}

// followed follows a story's run just started, and says so (msg).
func (s *Server) followed(rp *repo, st *readmodel.Started, msg string) actionResult {
	if rp.src.Watcher != nil {
		rp.src.Watcher.FollowStory(st)
	}
	return actionResult{Session: st.Session, Message: msg}
}

// ack is POST /ack: the user saw what needed them (key).
func (s *Server) ack(w http.ResponseWriter, r *http.Request) {
	if !form(w, r) {
		return
	}
	key := r.PostForm.Get("key")
	if key == "" || len(key) > 4096 {
		httpError(w, "saga-lsp dashboard: acknowledge what? (key)", http.StatusBadRequest)
		return
	}
	s.ackMu.Lock()
	s.acked[key] = true
	s.ackMu.Unlock()
	for _, rp := range s.repos {
		s.hub.notify(Change{Root: rp.src.Root, All: true})
	}
	back := r.PostForm.Get("back")
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.Contains(back, "\\") {
		back = "/"
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, actionResult{OK: true, Message: "acknowledged"})
		return
	}
	redirect(w, back, http.StatusSeeOther)
}

func (s *Server) isAcked(key string) bool {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	return s.acked[key]
}
