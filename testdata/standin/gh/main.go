// Command gh is a stand-in for the GitHub CLI, for tests of saga-lsp's
// worker. It keeps pull requests in a JSON state file instead of GitHub and
// answers the few commands the worker uses with gh's output formats:
//
//	gh auth status
//	gh auth login --with-token   (the token on stdin)
//	gh auth logout
//	gh pr list   [--head B] [--base B] [--state open|closed|merged|all] [--json F,…] [--limit N] [--draft] [-R O/R]
//	gh pr create [--draft] --title T --body B [--base B] [--head H] [-R O/R]
//	gh pr ready  [<number>|<url>|<branch>] [--undo] [-R O/R]
//	gh pr view   [<number>|<url>|<branch>] [--json F,…] [-R O/R]
//	gh pr edit   [<number>|<url>|<branch>] [--title T] [--body B] [--base B] [-R O/R]
//	gh pr merge  [<number>|<url>|<branch>] --merge|--squash|--rebase [--match-head-commit SHA] [-d] [-R O/R]   (land.go)
//	gh workflow run <file> [-f K=V]… [-F K=V]… [--ref B] [-R O/R]
//	gh run list  [--workflow F] [--branch B] [--status S] [--event E] [--limit N] [--json F,…] [-R O/R]
//	gh run view  <run-id> [--json F,…] [--exit-status] [-R O/R]
//	gh run cancel <run-id> [--force] [-R O/R]
//	gh run download <run-id> [-D DIR] [-n NAME]… [-p PATTERN]… [-R O/R]
//	gh api repos/{owner}/{repo}/actions/workflows/<file>
//	gh api repos/{owner}/{repo}/actions/runs/<run-id>/artifacts[?…]
//	gh api repos/{owner}/{repo}/collaborators/<login>/permission
//	gh api -X POST repos/{owner}/{repo}/pulls/<n>/requested_reviewers -f reviewers[]=L…
//	gh api graphql -f query=… (a PR's review; the reply, resolve and
//	                  comment mutations: review.go, reply.go; what landing
//	                  reads, the merge queue's enqueue: land.go, queue.go)
//	gh api [--paginate] repos/{owner}/{repo}/stacks   (queue.go)
//	gh __event <event> <file> [--ref B]   (the stand-in's own: GitHub
//	                  receiving a pull_request, push, … event that starts
//	                  the workflow as origin's branch B holds it)
//	gh --version
//
// GitHub Actions (actions.go, job.go): `workflow run` reads the workflow
// from origin's default branch (or --ref), checks the inputs as GitHub
// does, records a queued run whose displayTitle is the evaluated run-name,
// and starts its job in a detached `gh __job <id>`, which executes it
// locally in a fresh clone of origin and reports queued → (pending →)
// in_progress → completed with a conclusion. The JSON fields and their
// names are the real gh's (gh 2.23 lists the same ones). As on GitHub, a
// run's inputs are not among them (nor in the REST API's run): a
// dispatch's run is told by its displayTitle, the evaluated run-name;
// event, headBranch and workflowDatabaseId are the run's.
//
// Environment:
//
//	GH_STANDIN_STATE  the state file (required; created when missing):
//	                  {"prs":[{"number","url","headRefName","baseRefName","title","body","isDraft","state","createdAt"}]}
//	GH_STANDIN_AUTH   "none" makes gh act logged out, until `gh auth login`
//	                  (which, like `gh auth logout`, keeps the login in the
//	                  state file's "auth": "in" or "out", as gh keeps it in
//	                  its config: every later invocation sees it)
//	GH_STANDIN_USER   the logged-in account (default "saga-standin")
//	GH_STANDIN_REPO   OWNER/REPO of the repository (default: from the origin
//	                  remote: github.com URLs give their owner/repo, any other
//	                  remote "standin/<basename without .git>")
//	GH_STANDIN_LOG    when set, one JSON line per invocation is appended:
//	                  {"time","args","cwd","exitCode"}
//	GH_STANDIN_SECRET_<NAME>   the repository secret NAME of workflow runs
//	GH_STANDIN_HOLD   while this file exists, dispatched runs stay queued
//	GH_STANDIN_MINUTE how long a minute of timeout-minutes lasts (default 1m)
//	GH_STANDIN_CANCEL_GRACE    SIGINT → SIGTERM of a cancelled step (7.5s)
//	GH_STANDIN_PROVIDED        run: step ids taken as done (default
//	                  saga-lsp,claude-code,confinement: the test's PATH
//	                  provides what they install)
//	GH_STANDIN_LIST_DELAY      run list leaves out runs younger than this
//	                  (GitHub lists a dispatched run a little later)
//	GH_STANDIN_DISPATCH_DETAILS "1": workflow run prints the run's URL, as
//	                  gh does when GitHub returns the run's details
//
// Each run's files are in "<state>.actions/<run id>/": workflow.yml (as
// dispatched), job.log, workspace/ (the clone), temp/ (runner.temp),
// artifacts/<name>/, summary.md (the steps' GITHUB_STEP_SUMMARY).
//
// The repository is the git repository of the working directory; its
// "origin" remote stands for GitHub: pr create refuses a head branch that is
// not on origin (git ls-remote) or has no commits over the base, as GitHub
// does. Each state change is made under an exclusive flock of
// "<state>.lock", so parallel invocations are safe.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghrest"
)

func main() {
	cwd, _ := os.Getwd()
	os.Exit(run(os.Args[1:], os.Getenv, cwd, os.Stdin, os.Stdout, os.Stderr))
}

// ghError is an error with gh's exit code.
type ghError struct {
	code int
	msg  string
}

func (e *ghError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &ghError{code: code, msg: fmt.Sprintf(format, args...)}
}

// run is the whole command; it returns the exit code.
func run(args []string, getenv func(string) string, cwd string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 || args[0] != "__job" {
		defer func() { logInvocation(getenv("GH_STANDIN_LOG"), args, cwd, code) }()
	}
	g := &gh{getenv: getenv, cwd: cwd, stdin: stdin, stdout: stdout, stderr: stderr}
	err := g.dispatch(args)
	if err == nil {
		return 0
	}
	var ge *ghError
	if errors.As(err, &ge) {
		if ge.msg != "" {
			fmt.Fprintln(stderr, ge.msg)
		}
		return ge.code
	}
	fmt.Fprintln(stderr, err)
	return 1
}

func logInvocation(path string, args []string, cwd string, code int) {
	if path == "" {
		return
	}
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Time     string   `json:"time"`
		Args     []string `json:"args"`
		Cwd      string   `json:"cwd"`
		ExitCode int      `json:"exitCode"`
	}{time.Now().UTC().Format(time.RFC3339Nano), append([]string{}, args...), cwd, code}); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(line.Bytes())
}

type gh struct {
	// op is the REST operation being answered (reply.go), its answer
	// checked against GitHub's description before it is printed.
	op             *ghrest.Operation
	getenv         func(string) string
	cwd            string
	stdin          io.Reader
	stdout, stderr io.Writer
}

const rootUsage = `Work seamlessly with GitHub from the command line.

USAGE
  gh <command> <subcommand> [flags]

AVAILABLE COMMANDS (stand-in)
  auth:        Authenticate gh and git with GitHub
  pr:          Manage pull requests
  run:         View details about workflow runs
  workflow:    View details about GitHub Actions workflows`

func (g *gh) dispatch(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(g.stdout, rootUsage)
		return nil
	}
	switch args[0] {
	case "--version", "version":
		fmt.Fprintln(g.stdout, "gh version 2.63.0-standin (saga-lsp test stand-in)")
		fmt.Fprintln(g.stdout, "https://github.com/cli/cli/releases/latest")
		return nil
	case "auth":
		if len(args) >= 2 {
			switch args[1] {
			case "status":
				return g.authStatus(args[2:])
			case "login":
				return g.authLogin(args[2:])
			case "logout":
				return g.authLogout(args[2:])
			}
		}
		sub := ""
		if len(args) >= 2 {
			sub = args[1]
		}
		return fail(1, "unknown command %q for \"gh auth\"", sub)
	case "pr":
		if len(args) < 2 {
			return fail(1, "unknown command \"\" for \"gh pr\"")
		}
		switch args[1] {
		case "list", "ls":
			return g.prList(args[2:])
		case "create", "new":
			return g.prCreate(args[2:])
		case "ready":
			return g.prReady(args[2:])
		case "close":
			return g.prClose(args[2:])
		case "view":
			return g.prView(args[2:])
		case "edit":
			return g.prEdit(args[2:])
		case "merge":
			return g.prMerge(args[2:])
		}
		return fail(1, "unknown command %q for \"gh pr\" (not simulated by the stand-in)", args[1])
	case "workflow":
		if len(args) >= 2 && args[1] == "run" {
			return g.workflowRun(args[2:])
		}
		return fail(1, "unknown command %q for \"gh workflow\" (not simulated by the stand-in)", strings.Join(args[1:2], ""))
	case "run":
		if len(args) < 2 {
			return fail(1, "unknown command \"\" for \"gh run\"")
		}
		switch args[1] {
		case "list", "ls":
			return g.runList(args[2:])
		case "view":
			return g.runView(args[2:])
		case "cancel":
			return g.runCancel(args[2:])
		case "download":
			return g.runDownload(args[2:])
		}
		return fail(1, "unknown command %q for \"gh run\" (not simulated by the stand-in)", args[1])
	case "__job":
		return g.job(args[1:])
	case "__event":
		return g.event(args[1:])
	case "api":
		return g.api(args[1:])
	}
	return fail(1, "unknown command %q for \"gh\"\n\nUsage:  gh <command> <subcommand> [flags]", args[0])
}
