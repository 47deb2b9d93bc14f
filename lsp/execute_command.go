package lsp

// workspace/executeCommand: the commands of executeCommandProvider, each
// under the client's prefix (initializationOptions.commandPrefix, default
// "saga."). Everything with a side effect goes through runs/control (runs)
// and scaffold (new files) — runs/review for an editor's review comment —,
// exactly as the CLI does it (`saga-lsp run`,
// `stop`, `new`); the server itself never shells out and never writes a
// file.
//
// Arguments: one object, or positional strings — both
//
//	[{"story": "add-logout-button", "dryRun": true}]
//	["add-logout-button"]
//
// are accepted (docs/protocol-extensions.md lists every command's fields
// and result).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/scaffold"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// codeRequestFailed is LSP's RequestFailed: the request was valid, the
// operation failed (tmux missing, a worker already running, …).
const codeRequestFailed = -32803

// commandFunc runs the command name from the snapshot current when it
// arrived.
type commandFunc func(ctx context.Context, s *Server, snap *Snapshot, name string, args []json.RawMessage) (any, error)

// decoded is the commandFunc of run, whose arguments decode into A
// (commandArgs: one object, or strings for the fields positional names).
func decoded[A any](run func(ctx context.Context, s *Server, snap *Snapshot, a A) (any, error), positional ...string) commandFunc {
	return func(ctx context.Context, s *Server, snap *Snapshot, name string, args []json.RawMessage) (any, error) {
		var a A
		if err := commandArgs(name, args, &a, positional...); err != nil {
			return nil, err
		}
		return run(ctx, s, snap, a)
	}
}

// commandOrder is the order of executeCommandProvider.commands.
var commandOrder = []string{"runStory", "stopStory", "createStory", "createTask", "createEpic", "showPlan", "showOutput",
	"runEpic", "stopEpic", "reviewStory", "addressReview", "addReviewComment", "openDashboard", "land", "resolveConflict"}

func commandTable() map[string]commandFunc {
	return map[string]commandFunc{
		"runStory":    decoded(cmdRunStory, "story"),
		"stopStory":   decoded(cmdStopStory, "story"),
		"createStory": decoded(cmdCreateStory, "name", "title"),
		"createTask":  decoded(cmdCreateTask, "story", "id", "subject"),
		"createEpic":  decoded(cmdCreateEpic, "id", "title"),
		"showPlan":    decoded(cmdShowPlan, "name"),
		"showOutput":  decoded(cmdShowOutput, "story"),
		"runEpic":     decoded(cmdRunEpic, "epic"),
		"stopEpic":    decoded(cmdStopEpic, "epic"),
		"reviewStory": decoded(cmdReviewStory, "story"),
		// The review loop (docs/review.md#in-every-face): a round, and an
		// editor's comment as a review task.
		"addressReview":    decoded(cmdAddressReview, "story"),
		"addReviewComment": decoded(cmdAddReviewComment, "story", "path", "line", "body"),
		// No arguments: the workspace's dashboard (dashboard.go).
		"openDashboard": cmdOpenDashboard,
		// Landing (land.go, docs/landing.md#in-the-dashboard-and-the-editors).
		"land":            decoded(cmdLand, "name"),
		"resolveConflict": decoded(cmdResolveConflict, "story"),
	}
}

// commandNames lists the executeCommand commands under the client's prefix.
func commandNames(prefix string) []string {
	out := make([]string, len(commandOrder))
	for i, n := range commandOrder {
		out[i] = prefix + n
	}
	return out
}

func executeCommand(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	prefix := s.clientInfo().commandPrefix
	name, ok := strings.CutPrefix(p.Command, prefix)
	f := commandTable()[name]
	if !ok || f == nil {
		return nil, &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("unknown command %q: this server runs %s",
			p.Command, strings.Join(commandNames(prefix), ", "))}
	}
	if snap.Root == "" {
		return nil, &rpcError{code: codeRequestFailed, msg: "no workspace folder: open a folder with .saga/ first"}
	}
	return f(ctx, s, snap, name, p.Arguments)
}

func (s *Server) clientInfo() clientInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// commandArgs decodes a command's arguments into v: one JSON object with
// v's fields, or strings standing for the fields named by positional.
func commandArgs(command string, args []json.RawMessage, v any, positional ...string) error {
	usage := fmt.Sprintf(`[{"%s": …}] or [%s]`, positional[0], quoteAll(positional))
	if len(args) == 0 {
		return &rpcError{code: codeInvalidParams, msg: command + ": missing arguments: pass " + usage}
	}
	first := bytes.TrimSpace(args[0])
	var raw []byte
	switch {
	case len(first) > 0 && first[0] == '{':
		if len(args) > 1 {
			return &rpcError{code: codeInvalidParams, msg: command + ": pass one object, or positional strings: " + usage}
		}
		raw = first
	default:
		if len(args) > len(positional) {
			return &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("%s: %d arguments, at most %d: %s", command, len(args), len(positional), usage)}
		}
		m := map[string]json.RawMessage{}
		for i, a := range args {
			var str string
			if json.Unmarshal(a, &str) != nil {
				return &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("%s: argument %d must be a string (%s): %s", command, i+1, positional[i], usage)}
			}
			m[positional[i]] = a
		}
		raw, _ = json.Marshal(m)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("%s: %v; pass %s", command, err, usage)}
	}
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"<` + n + `>"`
	}
	return strings.Join(q, ", ")
}

// commandError maps an error of package commands to a JSON-RPC error: a
// mistake in what was asked is -32602, a failed operation -32803 (no
// error: nil).
func commandError(command string, err error) error {
	if err == nil {
		return nil
	}
	var ue *store.UsageError
	if errors.As(err, &ue) {
		return &rpcError{code: codeInvalidParams, msg: command + ": " + ue.Msg}
	}
	msg := command + ": " + err.Error()
	var se *control.StartError
	if errors.As(err, &se) && strings.TrimSpace(se.Output) != "" {
		out := se.Output
		if len(out) > 2000 {
			out = "…" + out[len(out)-2000:]
		}
		msg = command + ": " + se.Error() + "\n" + out
	}
	return &rpcError{code: codeRequestFailed, msg: msg}
}

// ---------------------------------------------------------------------------
// run, stop, output

// runArgs are runStory's arguments; the worker options are those of
// `saga-lsp run` (0 / "" / false: the worker's defaults).
type runArgs struct {
	Story string `json:"story"`
	runs.WorkerFlags
}

// runResult is what runStory returns.
type runResult struct {
	Story      string `json:"story"`
	Session    string `json:"session"`
	OutputFile string `json:"outputFile"`
	EventsFile string `json:"eventsFile"`
	PID        int    `json:"pid"`
	Attach     string `json:"attach"`   // the command that shows the tmux session
	Finished   bool   `json:"finished"` // the worker completed while the command waited for it to start
}

// runSetupFor is root's run configuration (session dir, tmux, the GitHub
// Actions backend), resolved once, at initialize, and then handed to
// every run and stop: the server has one root, the one initialize found.
func (s *Server) runSetupFor(root string) control.Setup {
	s.runSetupMu.Lock()
	defer s.runSetupMu.Unlock()
	if s.runSetup == nil || s.runSetup.Root != root {
		rs := github.NewSetup(root, s.env)
		s.runSetup = &rs
	}
	return *s.runSetup
}

// cmdRunStory starts the story's worker in tmux (control.StartStory, as
// `saga-lsp run`), then follows it.
func cmdRunStory(ctx context.Context, s *Server, snap *Snapshot, a runArgs) (any, error) {
	return s.startStory(ctx, "runStory", snap.Root, a)
}

// cmdAddressReview starts a review round of the story (`saga-lsp run
// <story> --review`): its worker on its branch and PR, the review's
// requests as tasks (docs/review.md).
func cmdAddressReview(ctx context.Context, s *Server, snap *Snapshot, a runArgs) (any, error) {
	a.Review = true
	return s.startStory(ctx, "addressReview", snap.Root, a)
}

// startStory is runStory's and addressReview's start, then the follow.
func (s *Server) startStory(ctx context.Context, command, root string, a runArgs) (any, error) {
	st, err := control.StartStory(ctx, control.RunOptions{Setup: s.runSetupFor(root), Story: a.Story, Worker: a.WorkerFlags})
	if err != nil {
		return nil, commandError(command, err)
	}
	return s.followedStory(command, st), nil
}

// followedStory follows a story's run just started, and answers it.
func (s *Server) followedStory(command string, st *readmodel.Started) *runResult {
	s.live.followStarted(st)
	s.log.Info(command, "story", st.Story, "session", st.Session, "pid", st.PID)
	return &runResult{Story: st.Story, Session: st.Session, OutputFile: st.OutputFile, EventsFile: st.EventsFile,
		PID: st.PID, Attach: st.Attach, Finished: st.Finished}
}

type storyArgs struct {
	Story string `json:"story"`
}

// cmdStopStory stops the story's worker (control.StopStory, as `saga-lsp
// stop`: SIGINT, the worker's clean-up, then its tmux session).
func cmdStopStory(ctx context.Context, s *Server, snap *Snapshot, a storyArgs) (any, error) {
	res, err := control.StopStory(ctx, control.StopOptions{Setup: s.runSetupFor(snap.Root), Story: a.Story})
	return res, commandError("stopStory", err)
}

// epicRunArgs are runEpic's arguments: the flags of `saga-lsp run <epic>`
// (0 / "" / false: the runner's defaults).
type epicRunArgs struct {
	Epic        string  `json:"epic"`
	DryRun      bool    `json:"dryRun"`
	MaxParallel int     `json:"maxParallel"`
	MaxCost     float64 `json:"maxCost"`
	After       string  `json:"after"`
}

// cmdRunEpic starts the epic's runner in tmux (control.StartEpic, as
// `saga-lsp run <epic>`: the preflight, one runner per epic), then follows
// the run. It answers what `run <epic> --format json` prints:
// {"epic","session","outputFile","eventsFile","pid"}.
func cmdRunEpic(ctx context.Context, s *Server, snap *Snapshot, a epicRunArgs) (any, error) {
	st, err := control.StartEpic(ctx, control.EpicRunOptions{Setup: s.runSetupFor(snap.Root), Epic: a.Epic,
		Flags:  runs.EpicFlags{MaxParallel: a.MaxParallel, MaxCost: a.MaxCost, After: a.After},
		Worker: runs.WorkerFlags{DryRun: a.DryRun}})
	if err != nil {
		return nil, commandError("runEpic", err)
	}
	s.live.followStartedEpic(st)
	s.log.Info("runEpic", "epic", st.Epic, "session", st.Session, "pid", st.PID)
	return st, nil
}

type epicArgs struct {
	Epic string `json:"epic"`
}

// cmdStopEpic stops the epic's runner and every worker it started
// (control.StopEpic, as `saga-lsp stop <epic>`).
func cmdStopEpic(ctx context.Context, s *Server, snap *Snapshot, a epicArgs) (any, error) {
	res, err := control.StopEpic(ctx, control.StopOptions{Setup: s.runSetupFor(snap.Root), Story: a.Epic})
	return res, commandError("stopEpic", err)
}

// cmdReviewStory lists the files the story's branch changed against its
// base (control.ReviewStory), for the editor's diff views.
func cmdReviewStory(ctx context.Context, s *Server, snap *Snapshot, a storyArgs) (any, error) {
	res, err := control.ReviewStory(ctx, control.ReviewOptions{Root: snap.Root, Story: a.Story, Env: s.env})
	return res, commandError("reviewStory", err)
}

// reviewCommentArgs are addReviewComment's: a comment on a line of a
// file in the story's review diff. Line is a number, or its digits
// (positional arguments are strings).
type reviewCommentArgs struct {
	Story  string          `json:"story"`
	Path   string          `json:"path"`
	Line   json.RawMessage `json:"line"`
	Body   string          `json:"body"`
	Author string          `json:"author"` // default: the user's login
}

// cmdAddReviewComment makes an editor's comment a review task of the
// story (review.FromEditor: its worktree's copy, else the checkout's),
// the same comment twice one task.
func cmdAddReviewComment(ctx context.Context, s *Server, snap *Snapshot, a reviewCommentArgs) (any, error) {
	line := 0
	if raw := strings.Trim(strings.TrimSpace(string(a.Line)), `"`); raw != "" && raw != "null" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return nil, &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("addReviewComment: line %s: pass a line number ≥ 1 (0: the file)", a.Line)}
		}
		line = n
	}
	path := a.Path
	if filepath.IsAbs(path) { // an editor's own path of the file: relative to the checkout or its worktree
		for _, base := range []string{store.WorktreeDir(snap.Root, a.Story), snap.Root} {
			if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
				path = filepath.ToSlash(rel)
				break
			}
		}
	}
	res, err := review.FromEditor(ctx, s.parser, snap.Root, review.EditorComment{Story: a.Story, Path: path, Line: line, Body: a.Body,
		Author: cmpOr(a.Author, cmpOr(s.env("USER"), s.env("USERNAME")))}, time.Now())
	if err != nil {
		return nil, commandError("addReviewComment", err)
	}
	s.diskChanged([]string{filepath.Join(res.Root, filepath.FromSlash(res.File))})
	s.log.Info("addReviewComment", "story", a.Story, "task", res.Task, "created", res.Created)
	return res, nil
}

// cmdShowOutput opens the output file of the story's running (else last)
// worker with window/showDocument, and returns its path.
func cmdShowOutput(ctx context.Context, s *Server, snap *Snapshot, a storyArgs) (any, error) {
	if !store.ValidCanonical(a.Story) {
		return nil, &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("showOutput: invalid story name %q", a.Story)}
	}
	out := ""
	if info := s.live.storyInfo(a.Story); info.Run != nil {
		out = info.Run.OutputFile
	}
	dir := s.runSetupFor(snap.Root).SessionDir
	if out == "" {
		if rs := runs.Runs(dir, runs.KindStory, a.Story); len(rs) > 0 {
			out = runs.OutputOfEvents(rs[len(rs)-1].EventsFile)
		}
	}
	if out == "" {
		return nil, &rpcError{code: codeRequestFailed, msg: fmt.Sprintf("showOutput: story %s has no worker output in %s: run it first", a.Story, dir)}
	}
	if _, err := os.Stat(out); err != nil {
		return nil, &rpcError{code: codeRequestFailed, msg: fmt.Sprintf("showOutput: %v", err)}
	}
	shown := s.showDocument(ctx, out)
	return map[string]any{"story": a.Story, "outputFile": out, "shown": shown}, nil
}

// showDocument asks the client to open a file (when it can); it reports
// whether the client did.
func (s *Server) showDocument(ctx context.Context, path string) bool {
	if !s.clientInfo().showDocument {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	yes := true
	var res protocol.ShowDocumentResult
	if err := s.call(ctx, "window/showDocument", &protocol.ShowDocumentParams{URI: uri.File(path), TakeFocus: &yes}, &res); err != nil {
		s.log.Debug("window/showDocument", "err", err)
		return false
	}
	return res.Success
}

// ---------------------------------------------------------------------------
// create

// createResult is what the create commands return: root-relative paths,
// and the URI of the new file (which the client is asked to show).
type createResult struct {
	Created []string `json:"created"`
	Updated []string `json:"updated"`
	URI     string   `json:"uri"`
}

type createStoryArgs struct {
	Name        string   `json:"name"`
	Story       string   `json:"story"` // the same as name
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Epic        string   `json:"epic"`
	BlockedBy   []string `json:"blockedBy"`
}

func cmdCreateStory(ctx context.Context, s *Server, snap *Snapshot, a createStoryArgs) (any, error) {
	name := cmpOr(a.Name, a.Story)
	ch, err := scaffold.CreateStory(ctx, s.parser, snap.Root, scaffold.NewStory{Name: name,
		Title: cmpOr(a.Title, readableName(name)), Description: a.Description, Epic: a.Epic, BlockedBy: a.BlockedBy})
	return s.created("createStory", snap.Root, ch, err)
}

type createTaskArgs struct {
	Story       string   `json:"story"`
	ID          string   `json:"id"`
	Subject     string   `json:"subject"`
	Description string   `json:"description"`
	ActiveForm  string   `json:"activeForm"`
	BlockedBy   []string `json:"blockedBy"`
	Priority    string   `json:"priority"`
	Guidance    string   `json:"guidance"`
	DoneWhen    string   `json:"doneWhen"`
}

func cmdCreateTask(ctx context.Context, s *Server, snap *Snapshot, a createTaskArgs) (any, error) {
	ch, err := scaffold.CreateTask(ctx, s.parser, snap.Root, scaffold.NewTask{Story: a.Story, ID: a.ID,
		Subject: cmpOr(a.Subject, readableName(a.ID)), Description: a.Description, ActiveForm: a.ActiveForm,
		BlockedBy: a.BlockedBy, Priority: a.Priority, Guidance: a.Guidance, DoneWhen: a.DoneWhen})
	return s.created("createTask", snap.Root, ch, err)
}

type createEpicArgs struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

func cmdCreateEpic(ctx context.Context, s *Server, snap *Snapshot, a createEpicArgs) (any, error) {
	ch, err := scaffold.CreateEpic(ctx, s.parser, snap.Root, scaffold.NewEpic{ID: a.ID,
		Title: cmpOr(a.Title, readableName(a.ID)), Description: a.Description})
	return s.created("createEpic", snap.Root, ch, err)
}

// created answers a create command: its error (commandError), or its
// changes, taken into the snapshot at once (the watcher would too, a little
// later), and the new file shown to the client.
func (s *Server) created(command, root string, ch scaffold.Changes, err error) (any, error) {
	if err != nil {
		return nil, commandError(command, err)
	}
	res := &createResult{Created: nonNilStrings(ch.Created), Updated: nonNilStrings(ch.Updated)}
	var paths []string
	for _, rel := range slices.Concat(ch.Created, ch.Updated) {
		paths = append(paths, filepath.Join(root, filepath.FromSlash(rel)))
	}
	s.diskChanged(paths)
	if len(ch.Created) > 0 {
		path := filepath.Join(root, filepath.FromSlash(ch.Created[0]))
		res.URI = string(uri.File(path))
		if s.clientInfo().showDocument {
			// After the reply: a client may handle our request only then.
			s.bg.Go(func() { s.showDocument(context.Background(), path) })
		}
	}
	return res, nil
}

func nonNilStrings(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// readableName turns the last id of a name into a title: "user-auth--setup-db"
// → "Setup db".
func readableName(name string) string {
	if i := strings.LastIndex(name, "--"); i >= 0 {
		name = name[i+2:]
	}
	name = strings.TrimSpace(strings.ReplaceAll(name, "-", " "))
	if name == "" {
		return ""
	}
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// ---------------------------------------------------------------------------
// plan

// pickName is the story or epic a command names: "story", "epic", or
// "name" (either, resolved as the CLI resolves it).
func pickName(command, name, story, epic string) (string, store.NameKind, error) {
	want := store.NameEither
	switch {
	case story != "" && epic != "":
		return "", want, &rpcError{code: codeInvalidParams, msg: command + `: pass "story" or "epic", not both`}
	case story != "":
		name, want = story, store.NameStory
	case epic != "":
		name, want = epic, store.NameEpic
	}
	if name == "" {
		return "", want, &rpcError{code: codeInvalidParams, msg: command + `: name a story or an epic: [{"story": …}], [{"epic": …}], [{"name": …}] or ["<name>"]`}
	}
	return name, want, nil
}

// nameError is a name the workspace could not resolve, as an invalid
// parameter: an ambiguous one asks for "story" or "epic".
func nameError(command, name string, err error) error {
	var amb *store.AmbiguousNameError
	if errors.As(err, &amb) {
		return &rpcError{code: codeInvalidParams, msg: fmt.Sprintf(`%s: %v: pass [{"story": %q}] or [{"epic": %q}]`, command, amb, name, name)}
	}
	return &rpcError{code: codeInvalidParams, msg: command + ": " + err.Error()}
}

type planArgs struct {
	Name        string `json:"name"`
	Story       string `json:"story"`
	Epic        string `json:"epic"`
	MaxParallel int    `json:"maxParallel"`
}

// planResult is showPlan's result: the plan as `saga-lsp plan --format
// json` has it, as text, and the dependency graph (`--format mermaid`) with
// the states it draws and its critical path.
type planResult struct {
	Name         string            `json:"name"`
	Title        string            `json:"title"`
	Kind         string            `json:"kind"` // "story" or "epic"
	Text         string            `json:"text"`
	Plan         plan.Plan         `json:"plan"`
	States       map[string]string `json:"states"`
	CriticalPath []string          `json:"criticalPath"`
	Mermaid      string            `json:"mermaid"`
}

// cmdShowPlan computes the plan of a story (its tasks) or an epic (its
// stories, with their run states) from the editor's view (open buffers
// included), returns it, and shows it with window/showMessage to clients
// without a SAGA extension. The name is resolved as `saga-lsp plan` does
// (store.ResolveName): a name that is both a story and an epic must say
// which.
func cmdShowPlan(ctx context.Context, s *Server, snap *Snapshot, a planArgs) (any, error) {
	name, want, err := pickName("showPlan", a.Name, a.Story, a.Epic)
	if err != nil {
		return nil, err
	}
	planned, err := store.PlanFor(snap.WS, name, want)
	if err != nil {
		return nil, nameError("showPlan", name, err)
	}
	maxParallel := a.MaxParallel
	if maxParallel <= 0 {
		maxParallel = plan.DefaultMaxParallel
	}
	items := planned.Items
	pl := plan.Compute(items, maxParallel)
	var b bytes.Buffer
	if err := pl.WriteText(&b, planned.Title, planned.Noun, items, maxParallel); err != nil {
		return nil, err
	}
	states := plan.States(items)
	if planned.Kind == store.NameEpic {
		// The run state of every story, as `saga-lsp status <epic>` shows it.
		if st := s.live.epicStatus(ctx, snap, name); st != nil {
			states = st.GraphStates(items)
			b.WriteByte('\n')
			if err := st.WriteText(&b, snap.WS.Epic(name).Title); err != nil {
				return nil, err
			}
		}
	}
	var graph bytes.Buffer
	if err := plan.WriteMermaid(&graph, items, states); err != nil {
		return nil, err
	}
	// Clients with a SAGA extension (they opt in to saga/* notifications)
	// show the returned plan themselves; a message on top would repeat it.
	if !s.clientInfo().sagaNotifications {
		s.showMessage(protocol.MessageTypeInfo, b.String())
	}
	return &planResult{Name: name, Title: planned.Title, Kind: string(planned.Kind), Text: b.String(), Plan: pl,
		States: states, CriticalPath: nonNilStrings(plan.CriticalPath(items, states)), Mermaid: graph.String()}, nil
}
