package cli

import (
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

const serveSynopsis = "serve [--stdio] [--log-file FILE] [-rpc.trace]   (also: saga-lsp with no arguments)"

// runServe runs the language server on stdin/stdout. stdout carries only
// framed JSON-RPC; logs go to stderr or --log-file.
func runServe(env *Env, args []string) int {
	fs := newFlagSet(env, "serve", serveSynopsis)
	fs.Bool("stdio", true, "talk LSP over stdin/stdout (the only transport; accepted for clients that pass it)")
	logFile := fs.String("log-file", "", "append logs to FILE instead of stderr")
	trace := fs.Bool("rpc.trace", false, "log every JSON-RPC message")
	if _, err := parseInterspersed(fs, args); err != nil {
		return flagError(err)
	}
	var logOut io.Writer = env.Stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fail(env, fmt.Errorf("open log file: %w", err))
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
