package epic

import (
	"context"
	"log/slog"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// serve opens the socket `status <epic>` asks while the run goes on
// (docs/architecture.md#status-asks-the-live-runner); nil, and said at
// debug level, where it cannot be opened (a session dir path too long for
// a socket's): callers then derive the state themselves, as without a
// runner.
func (r *runner) serve() *readmodel.EpicServer {
	dir, err := readmodel.SessionDirOf(r.o.SessionDir, r.o.Env)
	var s *readmodel.EpicServer
	if err == nil {
		s, err = readmodel.ServeEpicState(dir, r.root, r.o.Epic)
	}
	if err != nil {
		slog.Debug("status is not answered by the runner", "epic", r.o.Epic, "err", err)
		return nil
	}
	return s
}

// viewQuery is the query `status <epic>` would make itself, with what
// the runner's steps keep: the view the runner serves.
func (r *runner) viewQuery() readmodel.EpicQuery {
	q := readmodel.ViewQuery(r.root, r.o.Epic, r.o.Env, r.parser)
	q.SessionDir, q.Actions = r.o.SessionDir, r.setup.Actions
	q.Runs, q.Branches, q.Kept = &r.folds, &r.branches, &r.kept
	return q
}

// answer derives the faces' view of the epic now and tells it to every
// caller waiting: callers that ask when no step has published the view
// (nobody asked lately). It runs in the loop, between steps: the keepers
// are the loop's alone.
func (r *runner) answer(ctx context.Context, s *readmodel.EpicServer, c readmodel.EpicRequest) {
	ws, st, err := readmodel.LoadEpicState(ctx, r.viewQuery())
	if err != nil {
		slog.Debug("status not answered", "epic", r.o.Epic, "err", err)
	}
	s.Answer(c, titleOf(ws, r.o.Epic), st)
}

// titleOf is the epic's title in ws ("" without one).
func titleOf(ws *store.Workspace, epic string) string {
	if ws != nil {
		if e := ws.Epic(epic); e != nil {
			return e.Title
		}
	}
	return ""
}
