package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/saga-ai/saga-lsp/dashboard"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

const dashboardSynopsis = "dashboard [PATH…] [--addr HOST:PORT] [--open] [--format text|json]"

// runDashboard serves the workspaces at PATH… (default: the one the
// working directory is in) as live web pages until interrupted. The first
// line on stdout is the URL to open, with its access token.
func runDashboard(env *Env, args []string) int {
	c := newCmdLine("dashboard")
	addr := c.String("addr", dashboard.DefaultAddr, "listen on `HOST:PORT`; a port of 0 picks a free one. Anything but a loopback address is reachable from other machines (the token still guards it)")
	open := c.Bool("open", false, "open the dashboard in the default browser")
	format := c.String("format", "text", "`FORMAT` of the first line: text (the URL) or json ({\"url\": …})")
	paths, err := c.parse(args)
	if err := cmp.Or(err, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	roots, err := dashboardRoots(env, paths)
	if err != nil {
		return c.fail(env, err)
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	parser, err := store.NewParser()
	if err != nil {
		return c.fail(env, err)
	}
	// The language server's collector policy (serve.go): the workspaces'
	// trees are most of the heap, so the heap may grow in proportion to
	// their JSON, not to twice the live heap.
	debug.SetGCPercent(serveGCPercent)
	var sources []dashboard.Source
	for _, root := range roots {
		l, err := dashboard.OpenLocal(root, dashboard.LocalOptions{Parser: parser, Env: env.Getenv, Log: logger})
		if err != nil {
			return c.fail(env, fmt.Errorf("load %s: %w", root, err))
		}
		defer l.Close()
		sources = append(sources, l.Source())
	}
	sizeDashboardCollector()
	srv, err := dashboard.Start(dashboard.Options{Sources: sources, Addr: *addr, Env: env.Getenv, Parser: parser, Log: logger})
	if err != nil {
		return c.fail(env, err)
	}
	defer srv.Close()
	// Ctrl-C stops it cleanly from the moment its URL is out, and the
	// warning comes first: whoever reads the URL may stop it at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, supervise.TerminateSignal())
	defer stop()
	if !srv.Loopback() {
		fmt.Fprintf(env.Stderr, "saga-lsp dashboard: warning: listening on %s, reachable from other machines; anyone with the URL can run stories\n", srv.Addr())
	}
	if *format == "json" {
		line, _ := json.Marshal(map[string]string{"url": srv.URL()})
		fmt.Fprintf(env.Stdout, "%s\n", line)
	} else {
		fmt.Fprintln(env.Stdout, srv.URL())
	}
	fmt.Fprintf(env.Stderr, "saga-lsp dashboard: serving %d repositor%s; Ctrl-C stops\n", len(roots), map[bool]string{true: "y", false: "ies"}[len(roots) == 1])
	if *open {
		if err := openBrowser(srv.URL()); err != nil {
			fmt.Fprintf(env.Stderr, "saga-lsp dashboard: could not open a browser (%v): open the URL above\n", err)
		}
	}
	<-ctx.Done()
	fmt.Fprintln(env.Stderr, "saga-lsp dashboard: stopped")
	return exitOK
}

// dashboardRoom is how far the heap may grow above the live heap between
// collections once the workspaces are loaded. A dashboard allocates per
// page it serves (W's home page: 0.63 MB; a page of its 2,000 stories:
// 0.9 MB), not per keystroke, and sits idle in between, so a collection
// every few page views costs little, while the language server's minimum
// room (GOGC 10 of W's live heap, ~5 MB) put the dashboard's resident size
// above a language server's on the same workspace (BenchmarkDashboardHome:
// 1.01×; 0.98× with this room, the 2,000-row pages included).
const dashboardRoom = 3 << 20

// sizeDashboardCollector collects the load's garbage and sets GOGC from the
// live heap: dashboardRoom above it, at most the language server's load
// ratio.
func sizeDashboardCollector() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m) // as sizeCollector
	if live := m.HeapAlloc; live > 0 {
		debug.SetGCPercent(int(min(max(100*dashboardRoom/live, 1), serveGCPercent)))
	}
}

// dashboardRoots are the workspaces at paths (each the nearest folder at
// or above it with .saga/), else the working directory's; each once.
func dashboardRoots(env *Env, paths []string) ([]string, error) {
	if len(paths) == 0 {
		r, err := resolveRoot(env, "", false)
		if err != nil {
			return nil, err
		}
		return []string{r}, nil
	}
	var roots []string
	seen := map[string]bool{}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Dir, p)
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return nil, usagef("%s is not a folder: name the repositories to show (folders with .saga/)", p)
		}
		r, err := store.FindRoot(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !seen[r] {
			seen[r] = true
			roots = append(roots, r)
		}
	}
	return roots, nil
}

// openBrowser opens url in the desktop's browser.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.Command(name, url)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
