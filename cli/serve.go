package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/saga-ai/saga-lsp/lsp"
)

// serveGCPercent is the language server's GOGC: collect when the heap has
// grown by half the live heap (design.md §10: resident memory near the
// live heap, on any workspace size).
const serveGCPercent = 50

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
	// resident size near the live heap in proportion to the workspace. (A
	// fixed soft limit did that for W but, on a workspace whose live heap
	// exceeds it, collected without pause: at 4W, 7× W's start-up and 10 ms
	// keystrokes.)
	debug.SetGCPercent(serveGCPercent)
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	return lsp.Serve(ctx, env.Stdin, env.Stdout, lsp.Options{Logger: logger, Trace: *trace, Version: Version})
}
