package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"

	"github.com/saga-ai/saga-lsp/lsp"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// serveGCPercent is the language server's GOGC while it loads the
// workspace: collect when the heap has grown by half the live heap. Nearly
// all a load allocates stays live, so collecting more often would cost
// start-up time and save little.
const serveGCPercent = 50

// Once loaded, the collector is sized from the workspace (docs/architecture.md#budgets:
// peak RSS ≤ 3× its JSON bytes): the heap may grow by what
// serveMemoryPerByte × the JSON bytes leaves above the runtime's memory in
// use, but always by serveMinRoom (small workspaces are dominated by the
// runtime itself, and would otherwise collect on every keystroke), and
// GOGC stays between serveMinGCPercent and serveGCPercent: as a ratio it
// follows a workspace that grows, and never collects without pause the way
// a fixed limit below the live heap does.
const (
	serveMemoryPerByte = 2.9 // of the 3× budget: the rest is the binary and memory outside Go's
	serveMinRoom       = 16 << 20
	serveMinGCPercent  = 10
)

// gcPercentAfterLoad is the GOGC for a workspace of srcBytes of JSON whose
// live heap is live bytes, the Go runtime using inUse bytes in all.
func gcPercentAfterLoad(srcBytes, live, inUse uint64) int {
	room := uint64(serveMinRoom)
	if budget := uint64(serveMemoryPerByte * float64(srcBytes)); budget > inUse+room {
		room = budget - inUse
	}
	if live == 0 {
		return serveGCPercent
	}
	return int(min(max(100*room/live, serveMinGCPercent), serveGCPercent))
}

// sizeCollector is told the JSON bytes of the loaded workspace. It collects
// the load's garbage once, before the editor starts typing, and sets GOGC
// from the live heap.
func sizeCollector(srcBytes int64) {
	// runtime.ReadMemStats, not runtime/metrics: that package's init costs
	// every start of the binary, the hook's included, ~0.2 ms.
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	// Sys less the idle heap (released, and free spans the heap reuses
	// before it grows) is what the process holds.
	debug.SetGCPercent(gcPercentAfterLoad(uint64(srcBytes), m.HeapAlloc, m.Sys-m.HeapIdle))
}

const serveSynopsis = "serve [--stdio] [--log-file FILE] [--rpc.trace]   (also: saga-lsp with no arguments on a pipe)"

// serveCmdLine is serve's command line; `saga-lsp` with serve's flags and
// no command is serve too.
func serveCmdLine() (c *cmdLine, logFile *string, trace *bool) {
	c = newCmdLine("serve")
	c.Bool("stdio", true, "talk LSP over stdin/stdout (the only transport; accepted for clients that pass it)")
	logFile = c.String("log-file", "", "append logs to `FILE` instead of stderr")
	trace = c.Bool("rpc.trace", false, "log every JSON-RPC message")
	return c, logFile, trace
}

// runServe runs the language server on stdin/stdout. stdout carries only
// framed JSON-RPC; logs go to stderr or --log-file.
func runServe(env *Env, args []string) int {
	c, logFile, trace := serveCmdLine()
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos)); err != nil {
		return c.fail(env, err)
	}
	var logOut io.Writer = env.Stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return c.fail(env, fmt.Errorf("open log file: %w", err))
		}
		defer f.Close()
		logOut = f
	}
	level := slog.LevelInfo
	if *trace {
		level = slog.LevelDebug
	}
	// The server keeps every file's syntax tree; with the default collector
	// the heap may grow to twice that before a cycle. A lower GOGC keeps the
	// resident size near the live heap in proportion to the workspace, and
	// once it is loaded sizeCollector lowers it to what the memory budget
	// leaves. (A fixed soft limit did that for W but, on a workspace whose
	// live heap exceeds it, collected without pause: at 4W, 7× W's start-up
	// and 10 ms keystrokes. A GOGC never does.)
	debug.SetGCPercent(serveGCPercent)
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), supervise.TerminateSignal())
	defer stop()
	return lsp.Serve(ctx, env.Stdin, env.Stdout, lsp.Options{Logger: logger, Trace: *trace, Version: version(), Loaded: sizeCollector})
}
