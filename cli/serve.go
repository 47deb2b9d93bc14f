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

// serveMemoryLimit is the language server's soft heap limit (design.md §10:
// ≤ 200 MB resident on workload W).
const serveMemoryLimit = 150 << 20

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
	// the heap may grow to twice that before a cycle. A soft limit keeps the
	// resident size near the live heap on large workspaces (W: ~100 MB live)
	// at the cost of more frequent collections only when it is reached.
	debug.SetMemoryLimit(serveMemoryLimit)
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	return lsp.Serve(ctx, env.Stdin, env.Stdout, lsp.Options{Logger: logger, Trace: *trace, Version: Version})
}
