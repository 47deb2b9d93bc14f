package epic

import (
	"context"
	"log/slog"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
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

// answer derives the faces' view of the epic — the query `status <epic>`
// would make itself — with what the runner's steps keep, and tells it to
// every caller waiting. It runs in the loop, between steps: the keepers
// are the loop's alone.
func (r *runner) answer(ctx context.Context, s *readmodel.EpicServer, c readmodel.EpicRequest) {
	q := readmodel.ViewQuery(r.root, r.o.Epic, r.o.Env, r.parser)
	q.SessionDir, q.Actions = r.o.SessionDir, r.setup.Actions
	q.Runs, q.Branches, q.Kept = &r.folds, &r.branches, &r.kept
	ws, st, err := readmodel.LoadEpicState(ctx, q)
	if err != nil {
		slog.Debug("status not answered", "epic", r.o.Epic, "err", err)
		s.Answer(c, "", nil)
		return
	}
	title := ""
	if e := ws.Epic(r.o.Epic); e != nil {
		title = e.Title
	}
	s.Answer(c, title, st)
}
