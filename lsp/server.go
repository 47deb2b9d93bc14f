// Package lsp is saga-lsp's language server: JSON-RPC over stdio, the
// lifecycle, an immutable snapshot of editor overlays plus disk per change,
// diagnostics pushed for the whole workspace, and one file per LSP feature.
//
// It also holds the LSP adapter of the live-run watcher (live*.go,
// check_failed.go, work_done_progress_cancel.go). Following workers and
// epic runners on disk is runs/watch's; the adapter only turns what the
// watcher reports into LSP — work-done progress (whose cancel stops the
// run), saga/workerProgress, saga/epicProgress and saga/taskStatus,
// code-lens refreshes — and computes the LSP-only diagnostics (stale-task,
// story-blocked, story-held, check-failed) from the watcher's immutable
// State, with no lock or I/O on the publishing path.
//
// It never shells out; operations with side effects go through runs/control
// and scaffold.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
)

// JSON-RPC and LSP error codes.
const (
	codeParseError           = -32700
	codeInvalidRequest       = -32600
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeInternalError        = -32603
	codeServerNotInitialized = -32002
	codeRequestCancelled     = -32800
)

// Options configure a server.
type Options struct {
	Logger *slog.Logger
	// Trace logs every JSON-RPC frame at debug level (-rpc.trace).
	Trace bool
	// Version is reported as serverInfo.version.
	Version string
	// Env looks up environment variables for the worker commands and live
	// state (the run protocol's variables: session dir, tmux socket, binary); nil is
	// os.Getenv.
	Env func(string) string
	// Loaded, when set, is given the bytes of the workspace's files once it
	// has been loaded from disk, before its diagnostics are published and
	// the load is reported done: the serve command sizes the collector
	// from them.
	Loaded func(srcBytes int64)

	// requestHook runs before each request handler; tests use it to hold a
	// request open (cancellation, slow requests).
	requestHook func(ctx context.Context, method string)
	// onServe receives the server when it starts; tests use it to compare
	// the server's copy of a buffer with the editor's.
	onServe func(*Server)
	// watchAdd stands between the file watcher and each watch it adds
	// (add); tests use it to inject the watch limit's ENOSPC.
	watchAdd func(dir string, add func(string) error) error
}

// requestFunc answers a request from a snapshot. It runs on its own
// goroutine: it must read only the snapshot and its params.
type requestFunc func(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error)

// notificationFunc handles a notification in arrival order; it may change
// the server's state.
type notificationFunc func(ctx context.Context, s *Server, params json.RawMessage) error

// methods is the one place listing what the server answers; each handler
// lives in the file named after its method.
type methods struct {
	requests      map[string]requestFunc
	notifications map[string]notificationFunc
}

func methodTable() methods {
	return methods{
		requests: map[string]requestFunc{
			"textDocument/hover":          hover,
			"textDocument/completion":     completion,
			"textDocument/definition":     definition,
			"textDocument/references":     references,
			"textDocument/prepareRename":  prepareRename,
			"textDocument/rename":         rename,
			"textDocument/documentSymbol": documentSymbol,
			"workspace/symbol":            workspaceSymbol,
			"textDocument/codeAction":     codeAction,
			"textDocument/codeLens":       codeLens,
			"workspace/executeCommand":    executeCommand,
		},
		notifications: map[string]notificationFunc{
			"initialized":                      initialized,
			"textDocument/didOpen":             didOpen,
			"textDocument/didChange":           didChange,
			"textDocument/didClose":            didClose,
			"textDocument/didSave":             didSave,
			"workspace/didChangeWatchedFiles":  didChangeWatchedFiles,
			"window/workDoneProgress/cancel":   workDoneProgressCancel,
			"workspace/didChangeConfiguration": ignoreNotification,
			"$/setTrace":                       ignoreNotification,
		},
	}
}

type phase int

const (
	phaseNew phase = iota
	phaseRunning
	phaseShutdown
)

// Server is one language-server session.
type Server struct {
	log     *slog.Logger
	version string
	hook    func(ctx context.Context, method string)
	loaded  func(srcBytes int64) // Options.Loaded
	// watchAdd is Options.watchAdd.
	watchAdd func(dir string, add func(string) error) error
	parser   *store.Parser
	methods  methods
	conn     *jsonrpc2.Conn
	stream   *frameStream // writes results and notifications encoded once (frameStream.writeMessage)
	exit     chan int

	// mu guards everything below. Handlers never hold it while doing I/O.
	mu       sync.Mutex
	phase    phase
	snap     *Snapshot
	inflight map[jsonrpc2.ID]context.CancelFunc
	client   clientInfo
	pub      *publisher
	disk     *workspace.Service // the funnel of disk changes (watch.go); set once in initialized
	live     *live              // the run watcher's LSP adapter (live.go); set once in Serve
	dash     lspDashboard       // saga.openDashboard's (dashboard.go)
	env      func(string) string
	bg       sync.WaitGroup

	// runSetup is the root's run configuration, resolved once per server
	// (runSetupFor, at initialize), guarded by its own mutex: no process
	// is started under it (tmux is found at its first use).
	runSetupMu sync.Mutex
	runSetup   *control.Setup

	nextToken tokenCounter
}

// Serve runs a server on the given streams until the client exits or the
// input ends, and returns the process exit code (0 after shutdown+exit).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	parser, err := store.NewParser()
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	s := &Server{
		log:      log,
		version:  opts.Version,
		hook:     opts.requestHook,
		loaded:   opts.Loaded,
		watchAdd: opts.watchAdd,
		parser:   parser,
		methods:  methodTable(),
		exit:     make(chan int, 1),
		inflight: map[jsonrpc2.ID]context.CancelFunc{},
		snap:     emptySnapshot(""),
		env:      opts.Env,
	}
	if s.env == nil {
		s.env = os.Getenv
	}
	if opts.onServe != nil {
		opts.onServe(s)
	}
	stream := newFrameStream(in, out, nil)
	if opts.Trace {
		stream.trace = func(dir string, body []byte) { log.Debug("rpc", "dir", dir, "body", string(body)) }
	}
	s.stream = stream
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.pub = newPublisher(s)
	s.live = newLive(s, s.env)
	conn := jsonrpc2.NewConn(ctx, stream, s, jsonrpc2.SetLogger(slogLogger{log}))
	s.setConn(conn)
	code := 1
	select {
	case code = <-s.exit:
	case <-conn.DisconnectNotify():
		// Clients send exit and close the input at once: an exit handled
		// before the end of input is its code, whichever case select saw.
		select {
		case code = <-s.exit:
		default:
			log.Info("input closed; exiting")
		}
	case <-ctx.Done():
	}
	cancel()
	s.stopBackground()
	conn.Close()
	return code
}

// setConn records the connection; the first message may arrive before
// NewConn returns, so Handle records it too.
func (s *Server) setConn(c *jsonrpc2.Conn) {
	s.mu.Lock()
	if s.conn == nil {
		s.conn = c
	}
	s.mu.Unlock()
}

func (s *Server) connection() *jsonrpc2.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// Handle implements jsonrpc2.Handler. It is called for one message at a
// time, in arrival order: notifications are applied right here, in order;
// requests are answered on their own goroutine from the snapshot current
// now, so a slow request never holds up typing.
func (s *Server) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	s.setConn(conn)
	params := json.RawMessage("null")
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		s.handleNotification(ctx, req.Method, params)
		return
	}
	s.mu.Lock()
	ph := s.phase
	s.mu.Unlock()
	switch {
	case req.Method == "initialize":
		if ph != phaseNew {
			s.replyErr(ctx, conn, req.ID, codeInvalidRequest, "initialize was already called")
			return
		}
		s.reply(ctx, conn, req.ID, s.safe(req.Method, func() (any, error) { return s.initialize(params) }))
		return
	case ph == phaseNew:
		s.replyErr(ctx, conn, req.ID, codeServerNotInitialized, "the server is not initialized: send initialize first")
		return
	case ph == phaseShutdown:
		s.replyErr(ctx, conn, req.ID, codeInvalidRequest, "the server is shut down: only exit is accepted")
		return
	case req.Method == "shutdown":
		s.mu.Lock()
		s.phase = phaseShutdown
		s.mu.Unlock()
		s.reply(ctx, conn, req.ID, result{value: nil})
		return
	}
	h, ok := s.methods.requests[req.Method]
	if !ok {
		s.replyErr(ctx, conn, req.ID, codeMethodNotFound, "method not supported: "+req.Method)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	snap := s.snap
	s.inflight[req.ID] = cancel
	s.mu.Unlock()
	s.bg.Go(func() {
		defer func() {
			s.mu.Lock()
			delete(s.inflight, req.ID)
			s.mu.Unlock()
			cancel()
		}()
		if s.hook != nil {
			s.hook(rctx, req.Method)
		}
		res := s.safe(req.Method, func() (any, error) { return h(rctx, s, snap, params) })
		if rctx.Err() != nil {
			s.replyErr(ctx, conn, req.ID, codeRequestCancelled, "request cancelled")
			return
		}
		s.reply(ctx, conn, req.ID, res)
	})
}

func (s *Server) handleNotification(ctx context.Context, method string, params json.RawMessage) {
	switch method {
	case "exit":
		s.mu.Lock()
		code := 1
		if s.phase == phaseShutdown {
			code = 0
		}
		s.mu.Unlock()
		select {
		case s.exit <- code:
		default:
		}
		return
	case "$/cancelRequest":
		var p struct {
			ID jsonrpc2.ID `json:"id"`
		}
		if json.Unmarshal(params, &p) == nil {
			s.mu.Lock()
			cancel := s.inflight[p.ID]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return
	}
	s.mu.Lock()
	ph := s.phase
	s.mu.Unlock()
	if ph != phaseRunning {
		s.log.Debug("notification outside the running phase dropped", "method", method)
		return
	}
	h, ok := s.methods.notifications[method]
	if !ok {
		return // unknown notifications are ignored, as the protocol asks
	}
	res := s.safe(method, func() (any, error) { return nil, h(ctx, s, params) })
	if res.err != nil {
		s.log.Warn("notification failed", "method", method, "err", res.err)
	}
}

// result is a handler's outcome; code is set for errors that carry a
// JSON-RPC code.
type result struct {
	value any
	err   error
}

// rpcError is an error with a JSON-RPC code.
type rpcError struct {
	code int64
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

func invalidParams(err error) error {
	return &rpcError{code: codeInvalidParams, msg: "invalid params: " + err.Error()}
}

// safe runs a handler, turning a panic into an error response: one bad
// message must never take the server down.
func (s *Server) safe(method string, f func() (any, error)) (r result) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			r = result{err: &rpcError{code: codeInternalError, msg: fmt.Sprintf("internal error in %s: %v", method, p)}}
		}
	}()
	v, err := f()
	return result{value: v, err: err}
}

func (s *Server) reply(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, r result) {
	if r.err != nil {
		var re *rpcError
		if errors.As(r.err, &re) {
			s.replyErr(ctx, conn, id, re.code, re.msg)
		} else {
			s.replyErr(ctx, conn, id, codeInternalError, r.err.Error())
		}
		return
	}
	raw, err := encode(r.value)
	if err != nil {
		s.replyErr(ctx, conn, id, codeInternalError, "encode result: "+err.Error())
		return
	}
	idJSON, err := id.MarshalJSON()
	if err != nil {
		s.replyErr(ctx, conn, id, codeInternalError, "encode id: "+err.Error())
		return
	}
	if err := s.stream.writeMessage(`"id":`+string(idJSON)+`,"result":`, raw); err != nil {
		s.log.Debug("reply", "err", err)
	}
}

func (s *Server) replyErr(ctx context.Context, conn *jsonrpc2.Conn, id jsonrpc2.ID, code int64, msg string) {
	if err := conn.ReplyWithError(ctx, id, &jsonrpc2.Error{Code: code, Message: msg}); err != nil {
		s.log.Debug("reply", "err", err)
	}
}

// notify sends a server→client notification.
func (s *Server) notify(method string, params any) {
	raw, err := encode(params)
	if err != nil {
		s.log.Error("encode notification", "method", method, "err", err)
		return
	}
	name, _ := json.Marshal(method)
	if err := s.stream.writeMessage(`"method":`+string(name)+`,"params":`, raw); err != nil {
		s.log.Debug("notify", "method", method, "err", err)
	}
}

// call sends a server→client request and waits for its answer.
func (s *Server) call(ctx context.Context, method string, params any, result any) error {
	conn := s.connection()
	if conn == nil {
		return errors.New("no connection")
	}
	raw, err := encode(params)
	if err != nil {
		return err
	}
	var out json.RawMessage
	if err := conn.Call(ctx, method, raw, &out); err != nil {
		return err
	}
	if result == nil || len(out) == 0 {
		return nil
	}
	return protocol.Unmarshal(out, result)
}

// encode marshals protocol values with go.lsp.dev/protocol's encoder (it
// knows the unions); plain values go through it too.
func encode(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := protocol.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// decode unmarshals params, turning failures into -32602.
func decode(params json.RawMessage, v any) error {
	if err := protocol.Unmarshal(params, v); err != nil {
		return invalidParams(err)
	}
	return nil
}

func ignoreNotification(ctx context.Context, s *Server, params json.RawMessage) error { return nil }

func (s *Server) stopBackground() {
	s.mu.Lock()
	for _, cancel := range s.inflight {
		cancel()
	}
	d := s.disk
	s.mu.Unlock()
	if d != nil {
		d.Close()
	}
	s.dash.close()
	s.live.close()
	s.pub.close()
}

// slogLogger adapts slog to jsonrpc2's logger.
type slogLogger struct{ l *slog.Logger }

func (l slogLogger) Printf(format string, v ...any) { l.l.Debug(fmt.Sprintf(format, v...)) }

// bell wakes a loop: rings while one is pending fold into it.
type bell chan struct{}

func newBell() bell { return make(bell, 1) }

func (b bell) ring() {
	select {
	case b <- struct{}{}:
	default:
	}
}
