package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"golang.org/x/term"
)

// Main is saga-lsp-hook's whole program (cmd/saga-lsp-hook): the hook
// alone, linked without the language server, the dashboard, the CLI and the
// checks' code, so that it starts in little more than an empty program's
// time — Claude Code starts it at every tool call
// (docs/hooks.md#the-hook-program). A completion whose checks it cannot
// settle from the worker's manifest it hands to `saga-lsp hook`
// (ExecSagaLSP). Its one argument is "hook", as in the command lines
// saga-lsp registers.
func Main(args []string, stdin io.Reader, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "hook" {
		fmt.Fprintf(stderr, "saga-lsp-hook: arguments %q ignored: it takes `hook`, and the event on stdin\n", strings.Join(args, " "))
	}
	return Run(stdin, env, stdout, stderr, ExecSagaLSP)
}

// Run is the hook as a program runs it, `saga-lsp hook` and saga-lsp-hook
// alike: the event payload on stdin, never typed at a terminal; checks
// decides the completions that may have checks.
func Run(stdin io.Reader, env func(string) string, stdout, stderr io.Writer, checks Checker) int {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(stderr, "saga-lsp hook: stdin is a terminal; Claude Code pipes the event payload in (`saga-lsp hook --help`)")
		return 0
	}
	return Hook(context.Background(), stdin, env, stdout, stderr, checks)
}

// ExecSagaLSP is saga-lsp-hook's Checker: the same completion, its payload
// and the process's environment, decided by `saga-lsp hook` — the saga-lsp
// of the same build beside saga-lsp-hook (runs.SelfPath), whose exit status
// it returns. The program's start is nothing beside the checks it runs.
// Without that saga-lsp it fails closed: the completion is refused, since
// its checks cannot run (Claude Code lets a completion through when the
// hook itself fails, docs/hooks.md#failing-closed). A stop signal is passed
// on, and the completion refused unless saga-lsp hook decided.
func ExecSagaLSP(ctx context.Context, c *Completion) int {
	refuse := func(why string) int {
		fmt.Fprintf(c.Stderr, "saga-lsp: task %s cannot be completed: its checks cannot run: %s\n", c.Task, why)
		return exitRefuse
	}
	bin, err := runs.SelfPath(c.Env)
	if err != nil {
		return refuse(err.Error())
	}
	if strings.TrimSuffix(filepath.Base(bin), ".exe") == runs.HookBinary {
		return refuse(fmt.Sprintf("they need saga-lsp, and no saga-lsp of the same build is beside %s (reinstall saga-lsp, or set %s to it)", bin, runs.EnvBin))
	}
	cmd := exec.Command(bin, "hook")
	cmd.Stdin = bytes.NewReader(c.Raw)
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, supervise.StopSignals()...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return refuse(fmt.Sprintf("start %s: %v", bin, err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-ctx.Done():
			_ = cmd.Process.Signal(supervise.TerminateSignal())
			ctx = context.Background() // once
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &exit) && exit.ExitCode() >= 0:
				return exit.ExitCode()
			default:
				return refuse(fmt.Sprintf("%s hook: %v", bin, err))
			}
		}
	}
}
