// Command gh is a stand-in for the GitHub CLI, for tests of saga-lsp's
// worker. It keeps pull requests in a JSON state file instead of GitHub and
// answers the few commands the worker uses with gh's output formats:
//
//	gh auth status
//	gh pr list   [--head B] [--base B] [--state open|closed|merged|all] [--json F,…] [--limit N] [--draft] [-R O/R]
//	gh pr create [--draft] --title T --body B [--base B] [--head H] [-R O/R]
//	gh pr ready  [<number>|<url>|<branch>] [--undo] [-R O/R]
//	gh pr edit   [<number>|<url>|<branch>] [--title T] [--body B] [-R O/R]
//	gh pr view   [<number>|<url>|<branch>] [--json F,…] [-R O/R]
//	gh pr edit   [<number>|<url>|<branch>] [--title T] [--body B] [--base B] [-R O/R]
//	gh --version
//
// Environment:
//
//	GH_STANDIN_STATE  the state file (required; created when missing):
//	                  {"prs":[{"number","url","headRefName","baseRefName","title","body","isDraft","state","createdAt"}]}
//	GH_STANDIN_AUTH   "none" makes gh act logged out
//	GH_STANDIN_USER   the logged-in account (default "saga-standin")
//	GH_STANDIN_REPO   OWNER/REPO of the repository (default: from the origin
//	                  remote: github.com URLs give their owner/repo, any other
//	                  remote "standin/<basename without .git>")
//	GH_STANDIN_LOG    when set, one JSON line per invocation is appended:
//	                  {"time","args","cwd","exitCode"}
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
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	cwd, _ := os.Getwd()
	os.Exit(run(os.Args[1:], os.Getenv, cwd, os.Stdout, os.Stderr))
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
func run(args []string, getenv func(string) string, cwd string, stdout, stderr io.Writer) (code int) {
	defer func() { logInvocation(getenv("GH_STANDIN_LOG"), args, cwd, code) }()
	g := &gh{getenv: getenv, cwd: cwd, stdout: stdout, stderr: stderr}
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
	getenv         func(string) string
	cwd            string
	stdout, stderr io.Writer
}

const rootUsage = `Work seamlessly with GitHub from the command line.

USAGE
  gh <command> <subcommand> [flags]

AVAILABLE COMMANDS (stand-in)
  auth:        Authenticate gh and git with GitHub
  pr:          Manage pull requests`

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
		if len(args) >= 2 && args[1] == "status" {
			return g.authStatus(args[2:])
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
		case "view":
			return g.prView(args[2:])
		case "edit":
			return g.prEdit(args[2:])
		}
		return fail(1, "unknown command %q for \"gh pr\" (not simulated by the stand-in)", args[1])
	}
	return fail(1, "unknown command %q for \"gh\"\n\nUsage:  gh <command> <subcommand> [flags]", args[0])
}

// ---- flags (pflag-like) ----

type flagSpec struct {
	long, short string
	value       bool // takes a value
}

type flags struct {
	vals       map[string]string
	set        map[string]bool
	positional []string
}

func parseFlags(cmd string, args []string, specs ...flagSpec) (*flags, error) {
	f := &flags{vals: map[string]string{}, set: map[string]bool{}}
	byLong, byShort := map[string]flagSpec{}, map[string]flagSpec{}
	for _, s := range specs {
		byLong[s.long] = s
		if s.short != "" {
			byShort[s.short] = s
		}
	}
	usage := "\n\nUsage:  gh " + cmd + " [flags]"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.positional = append(f.positional, args[i+1:]...)
			break
		}
		var spec flagSpec
		var ok bool
		var val string
		hasVal := false
		switch {
		case strings.HasPrefix(a, "--"):
			name, v, has := strings.Cut(a[2:], "=")
			spec, ok = byLong[name]
			if !ok {
				return nil, fail(1, "unknown flag: --%s%s", name, usage)
			}
			val, hasVal = v, has
		case strings.HasPrefix(a, "-") && len(a) > 1:
			spec, ok = byShort[a[1:2]]
			if !ok {
				return nil, fail(1, "unknown shorthand flag: '%s' in %s%s", a[1:2], a, usage)
			}
			if len(a) > 2 {
				val, hasVal = strings.TrimPrefix(a[2:], "="), true
			}
		default:
			f.positional = append(f.positional, a)
			continue
		}
		if spec.value {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, fail(1, "flag needs an argument: --%s%s", spec.long, usage)
				}
				i++
				val = args[i]
			}
		} else {
			if hasVal {
				if val != "true" && val != "false" {
					return nil, fail(1, "invalid argument %q for \"--%s\" flag: strconv.ParseBool: parsing %q: invalid syntax", val, spec.long, val)
				}
			} else {
				val = "true"
			}
		}
		f.vals[spec.long] = val
		f.set[spec.long] = true
	}
	return f, nil
}

// ---- auth ----

func (g *gh) loggedIn() bool { return g.getenv("GH_STANDIN_AUTH") != "none" }

func (g *gh) user() string {
	if u := g.getenv("GH_STANDIN_USER"); u != "" {
		return u
	}
	return "saga-standin"
}

func (g *gh) authStatus(args []string) error {
	if _, err := parseFlags("auth status", args, flagSpec{long: "hostname", short: "h", value: true},
		flagSpec{long: "show-token", short: "t"}, flagSpec{long: "active", short: "a"}); err != nil {
		return err
	}
	if !g.loggedIn() {
		return fail(1, "You are not logged into any GitHub hosts. To log in, run: gh auth login")
	}
	fmt.Fprintf(g.stdout, "github.com\n  ✓ Logged in to github.com account %s (GH_TOKEN)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n", g.user())
	return nil
}

func (g *gh) requireAuth() error {
	if g.loggedIn() {
		return nil
	}
	return fail(4, "To get started with GitHub CLI, please run:  gh auth login\nAlternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token.")
}

// ---- git ----

func (g *gh) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.cwd
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s", strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

var githubURL = regexp.MustCompile(`github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$`)

// repo is OWNER/REPO of the current repository (or of -R).
func (g *gh) repo(f *flags) (string, error) {
	if r := f.vals["repo"]; r != "" {
		return r, nil
	}
	if r := g.getenv("GH_STANDIN_REPO"); r != "" {
		return r, nil
	}
	if _, err := g.git("rev-parse", "--git-dir"); err != nil {
		return "", fail(1, "%s\n/usr/bin/git: exit status 128", err)
	}
	url, err := g.git("remote", "get-url", "origin")
	if err != nil {
		return "", fail(1, "no git remotes found")
	}
	url = strings.TrimSpace(url)
	if m := githubURL.FindStringSubmatch(url); m != nil {
		return m[1] + "/" + m[2], nil
	}
	return "standin/" + strings.TrimSuffix(filepath.Base(strings.TrimSuffix(url, "/")), ".git"), nil
}

// remoteSHA is the commit of refs/heads/<branch> on origin ("" if absent).
func (g *gh) remoteSHA(branch string) string {
	out, err := g.git("ls-remote", "origin", "refs/heads/"+branch)
	if err != nil {
		return ""
	}
	fields := strings.Fields(out)
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

func (g *gh) currentBranch() (string, error) {
	out, err := g.git("symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", fail(1, "could not determine the current branch: not on any branch")
	}
	return strings.TrimSpace(out), nil
}

// defaultBranch is origin's HEAD branch, or "main".
func (g *gh) defaultBranch() string {
	out, err := g.git("ls-remote", "--symref", "origin", "HEAD")
	if err == nil {
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
				if b, _, ok := strings.Cut(rest, "\t"); ok {
					return b
				}
			}
		}
	}
	return "main"
}

// ---- state ----

type pr struct {
	Number      int    `json:"number"`
	URL         string `json:"url"`
	HeadRefName string `json:"headRefName"`
	BaseRefName string `json:"baseRefName"`
	Title       string `json:"title"`
	Body        string `json:"body"`
	IsDraft     bool   `json:"isDraft"`
	State       string `json:"state"`
	CreatedAt   string `json:"createdAt"`
}

type state struct {
	PRs []*pr `json:"prs"`
}

// withState loads the state file under its lock, runs fn, and saves the
// state when fn reports a change.
func (g *gh) withState(fn func(st *state) (changed bool, err error)) error {
	path := g.getenv("GH_STANDIN_STATE")
	if path == "" {
		return fail(1, "gh stand-in: GH_STANDIN_STATE is not set")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	defer unix.Flock(int(lf.Fd()), unix.LOCK_UN)
	st := &state{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := save(path, st); err != nil {
			return err
		}
	case err != nil:
		return err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, st); err != nil {
			return fmt.Errorf("gh stand-in: bad state file %s: %v", path, err)
		}
	}
	changed, err := fn(st)
	if err != nil || !changed {
		return err
	}
	return save(path, st)
}

func save(path string, st *state) error {
	if st.PRs == nil {
		st.PRs = []*pr{}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func prefix(repo string) string { return "https://github.com/" + repo + "/pull/" }

// inRepo lists the repository's pull requests, newest first.
func inRepo(st *state, repo string) []*pr {
	var out []*pr
	for _, p := range st.PRs {
		if strings.HasPrefix(p.URL, prefix(repo)) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number > out[j].Number })
	return out
}

// ---- JSON output ----

var jsonFields = []string{"baseRefName", "body", "createdAt", "headRefName", "isDraft", "number", "state", "title", "url"}

func fieldList(spec string) ([]string, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fail(1, "Specify one or more comma-separated fields for `--json`:\n  %s", strings.Join(jsonFields, "\n  "))
	}
	var out []string
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if !contains(jsonFields, f) {
			return nil, fail(1, "Unknown JSON field: %q\nAvailable fields:\n  %s", f, strings.Join(jsonFields, "\n  "))
		}
		out = append(out, f)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// export is the PR with only the requested fields; encoding/json writes map
// keys sorted, as gh's exporter does.
func (p *pr) export(fields []string) map[string]any {
	all := map[string]any{"baseRefName": p.BaseRefName, "body": p.Body, "createdAt": p.CreatedAt,
		"headRefName": p.HeadRefName, "isDraft": p.IsDraft, "number": p.Number, "state": p.State,
		"title": p.Title, "url": p.URL}
	out := map[string]any{}
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}

// writeJSON prints data as gh does when stdout is not a terminal: compact,
// no HTML escaping, one trailing newline.
func (g *gh) writeJSON(data any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(data)
}

// ---- pr list ----

func (g *gh) prList(args []string) error {
	f, err := parseFlags("pr list", args,
		flagSpec{long: "head", short: "H", value: true}, flagSpec{long: "base", short: "B", value: true},
		flagSpec{long: "state", short: "s", value: true}, flagSpec{long: "json", value: true},
		flagSpec{long: "limit", short: "L", value: true}, flagSpec{long: "draft", short: "d"},
		flagSpec{long: "repo", short: "R", value: true}, flagSpec{long: "jq", short: "q", value: true},
		flagSpec{long: "template", short: "t", value: true})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] {
		return fail(1, "gh stand-in: --jq/--template are not simulated")
	}
	if len(f.positional) > 0 {
		return fail(1, "unknown argument %q for \"gh pr list\"", f.positional[0])
	}
	stateFilter := "open"
	if f.set["state"] {
		stateFilter = f.vals["state"]
	}
	if !contains([]string{"open", "closed", "merged", "all"}, stateFilter) {
		return fail(1, "invalid argument %q for \"-s, --state\" flag: valid values are {open|closed|merged|all}", stateFilter)
	}
	limit := 30
	if f.set["limit"] {
		n, err := strconv.Atoi(f.vals["limit"])
		if err != nil {
			return fail(1, "invalid argument %q for \"-L, --limit\" flag: strconv.ParseInt: parsing %q: invalid syntax", f.vals["limit"], f.vals["limit"])
		}
		if n < 1 {
			return fail(1, "invalid value for --limit: %d", n)
		}
		limit = n
	}
	var fields []string
	if f.set["json"] {
		if fields, err = fieldList(f.vals["json"]); err != nil {
			return err
		}
	}
	if err := g.requireAuth(); err != nil {
		return err
	}
	repo, err := g.repo(f)
	if err != nil {
		return err
	}
	head := f.vals["head"]
	if _, b, ok := strings.Cut(head, ":"); ok {
		head = b
	}
	var found []*pr
	err = g.withState(func(st *state) (bool, error) {
		for _, p := range inRepo(st, repo) {
			if head != "" && p.HeadRefName != head {
				continue
			}
			if f.vals["base"] != "" && p.BaseRefName != f.vals["base"] {
				continue
			}
			if f.set["draft"] && f.vals["draft"] == "true" && !p.IsDraft {
				continue
			}
			if stateFilter != "all" && !strings.EqualFold(p.State, stateFilter) {
				continue
			}
			found = append(found, p)
			if len(found) == limit {
				break
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if fields != nil {
		out := []map[string]any{}
		for _, p := range found {
			out = append(out, p.export(fields))
		}
		return g.writeJSON(out)
	}
	for _, p := range found {
		st := p.State
		if st == "OPEN" && p.IsDraft {
			st = "DRAFT"
		}
		fmt.Fprintf(g.stdout, "%d\t%s\t%s\t%s\t%s\n", p.Number, p.Title, p.HeadRefName, st, p.CreatedAt)
	}
	return nil
}

// ---- pr create ----

func (g *gh) prCreate(args []string) error {
	f, err := parseFlags("pr create", args,
		flagSpec{long: "draft", short: "d"}, flagSpec{long: "title", short: "t", value: true},
		flagSpec{long: "body", short: "b", value: true}, flagSpec{long: "base", short: "B", value: true},
		flagSpec{long: "head", short: "H", value: true}, flagSpec{long: "repo", short: "R", value: true},
		flagSpec{long: "fill", short: "f"})
	if err != nil {
		return err
	}
	if len(f.positional) > 0 {
		return fail(1, "unknown argument %q for \"gh pr create\"", f.positional[0])
	}
	fill := f.vals["fill"] == "true"
	if !fill && (!f.set["title"] || !f.set["body"]) {
		return fail(1, "must provide `--title` and `--body` (or `--fill` or `fill-first` or `--fillverbose`) when not running interactively")
	}
	if err := g.requireAuth(); err != nil {
		return err
	}
	repo, err := g.repo(f)
	if err != nil {
		return err
	}
	head := f.vals["head"]
	headGiven := head != ""
	if !headGiven {
		if head, err = g.currentBranch(); err != nil {
			return err
		}
	}
	base := f.vals["base"]
	if base == "" {
		base = g.defaultBranch()
	}
	title, body := f.vals["title"], f.vals["body"]
	if fill && title == "" {
		out, _ := g.git("log", "-1", "--format=%s", head)
		title = strings.TrimSpace(out)
	}
	headSHA := g.remoteSHA(head)
	if headSHA == "" {
		if !headGiven {
			return fail(1, "aborted: you must first push the current branch to a remote, or use the --head flag")
		}
		return fail(1, "pull request create failed: GraphQL: Head sha can't be blank, Base sha can't be blank, No commits between %s and %s, Head ref must be a branch (createPullRequest)", base, head)
	}
	baseSHA := g.remoteSHA(base)
	if baseSHA == "" {
		return fail(1, "pull request create failed: GraphQL: Base ref must be a branch (createPullRequest)")
	}
	if headSHA == baseSHA {
		return fail(1, "pull request create failed: GraphQL: No commits between %s and %s (createPullRequest)", base, head)
	}
	if _, err := g.git("merge-base", "--is-ancestor", headSHA, baseSHA); err == nil {
		return fail(1, "pull request create failed: GraphQL: No commits between %s and %s (createPullRequest)", base, head)
	}
	var created *pr
	err = g.withState(func(st *state) (bool, error) {
		max := 0
		for _, p := range inRepo(st, repo) {
			if p.HeadRefName == head && p.BaseRefName == base && p.State == "OPEN" {
				return false, fail(1, "a pull request for branch %q into branch %q already exists:\n%s", head, base, p.URL)
			}
			if p.Number > max {
				max = p.Number
			}
		}
		created = &pr{Number: max + 1, HeadRefName: head, BaseRefName: base, Title: title, Body: body,
			IsDraft: f.vals["draft"] == "true", State: "OPEN", CreatedAt: time.Now().UTC().Format(time.RFC3339)}
		created.URL = prefix(repo) + strconv.Itoa(created.Number)
		st.PRs = append(st.PRs, created)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, created.URL)
	return nil
}

// ---- finding one PR ----

var prURL = regexp.MustCompile(`^https?://[^/]+/([^/]+/[^/]+)/pull/(\d+)`)

// find resolves a number, URL or branch (empty: the current branch) to a
// pull request: for a branch, the newest open one, else the newest.
func (g *gh) find(st *state, repo, arg string) (*pr, error) {
	if arg == "" {
		b, err := g.currentBranch()
		if err != nil {
			return nil, err
		}
		arg = b
	}
	number := 0
	if m := prURL.FindStringSubmatch(arg); m != nil {
		repo = m[1]
		number, _ = strconv.Atoi(m[2])
	} else if n, err := strconv.Atoi(strings.TrimPrefix(arg, "#")); err == nil && n > 0 {
		number = n
	}
	prs := inRepo(st, repo)
	if number > 0 {
		for _, p := range prs {
			if p.Number == number {
				return p, nil
			}
		}
		return nil, fail(1, "GraphQL: Could not resolve to a PullRequest with the number of %d. (repository.pullRequest)", number)
	}
	var any *pr
	for _, p := range prs {
		if p.HeadRefName != arg {
			continue
		}
		if p.State == "OPEN" {
			return p, nil
		}
		if any == nil {
			any = p
		}
	}
	if any != nil {
		return any, nil
	}
	return nil, fail(1, "no pull requests found for branch %q", arg)
}

// ---- pr edit ----

// prEdit changes a pull request's title, body or base and prints its URL,
// as gh does; a merged or closed one cannot change its base.
func (g *gh) prEdit(args []string) error {
	f, err := parseFlags("pr edit", args,
		flagSpec{long: "title", short: "t", value: true}, flagSpec{long: "body", short: "b", value: true},
		flagSpec{long: "base", short: "B", value: true}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if len(f.positional) > 1 {
		return fail(1, "accepts at most 1 arg(s), received %d", len(f.positional))
	}
	if !f.set["title"] && !f.set["body"] && !f.set["base"] {
		return fail(1, "specify at least one flag to edit when not running interactively")
	}
	if err := g.requireAuth(); err != nil {
		return err
	}
	repo, err := g.repo(f)
	if err != nil {
		return err
	}
	arg := ""
	if len(f.positional) == 1 {
		arg = f.positional[0]
	}
	var url string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if f.set["base"] && p.State != "OPEN" {
			return false, fail(1, "GraphQL: Cannot change the base branch of a %s pull request. (updatePullRequest)", strings.ToLower(p.State))
		}
		if f.set["title"] {
			p.Title = f.vals["title"]
		}
		if f.set["body"] {
			p.Body = f.vals["body"]
		}
		if f.set["base"] {
			p.BaseRefName = f.vals["base"]
		}
		url = p.URL
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, url)
	return nil
}

// ---- pr ready ----

func (g *gh) prReady(args []string) error {
	f, err := parseFlags("pr ready", args, flagSpec{long: "undo"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	undo := f.vals["undo"] == "true"
	var msg string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if p.State != "OPEN" {
			return false, fail(1, "Pull request #%d is %s. Only draft pull requests can be marked as \"ready for review\"", p.Number, strings.ToLower(p.State))
		}
		switch {
		case undo && p.IsDraft:
			msg = fmt.Sprintf("! Pull request #%d is already \"in draft\"", p.Number)
			return false, nil
		case undo:
			p.IsDraft = true
			msg = fmt.Sprintf("✓ Pull request #%d is converted to \"draft\"", p.Number)
			return true, nil
		case !p.IsDraft:
			msg = fmt.Sprintf("! Pull request #%d is already \"ready for review\"", p.Number)
			return false, nil
		}
		p.IsDraft = false
		msg = fmt.Sprintf("✓ Pull request #%d is marked as \"ready for review\"", p.Number)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stderr, msg)
	return nil
}

// prTarget is the repository and the pull request argument (a number, URL
// or branch; "" for the current branch) of pr ready/edit/view, once
// authenticated.
func (g *gh) prTarget(f *flags) (repo, arg string, err error) {
	if len(f.positional) > 1 {
		return "", "", fail(1, "accepts at most 1 arg(s), received %d", len(f.positional))
	}
	if err := g.requireAuth(); err != nil {
		return "", "", err
	}
	if repo, err = g.repo(f); err != nil {
		return "", "", err
	}
	if len(f.positional) == 1 {
		arg = f.positional[0]
	}
	return repo, arg, nil
}

// ---- pr edit ----

func (g *gh) prEdit(args []string) error {
	f, err := parseFlags("pr edit", args, flagSpec{long: "title", short: "t", value: true}, flagSpec{long: "body", short: "b", value: true},
		flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if !f.set["title"] && !f.set["body"] {
		return fail(1, "specify at least one field to edit (the stand-in simulates --title and --body)")
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	var url string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if f.set["title"] {
			p.Title = f.vals["title"]
		}
		if f.set["body"] {
			p.Body = f.vals["body"]
		}
		url = p.URL
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, url)
	return nil
}

// ---- pr view ----

func (g *gh) prView(args []string) error {
	f, err := parseFlags("pr view", args, flagSpec{long: "json", value: true}, flagSpec{long: "repo", short: "R", value: true},
		flagSpec{long: "jq", short: "q", value: true}, flagSpec{long: "template", short: "t", value: true},
		flagSpec{long: "web", short: "w"}, flagSpec{long: "comments", short: "c"})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] || f.set["web"] {
		return fail(1, "gh stand-in: --jq/--template/--web are not simulated")
	}
	if len(f.positional) > 1 {
		return fail(1, "accepts at most 1 arg(s), received %d", len(f.positional))
	}
	var fields []string
	if f.set["json"] {
		if fields, err = fieldList(f.vals["json"]); err != nil {
			return err
		}
	}
	if err := g.requireAuth(); err != nil {
		return err
	}
	repo, err := g.repo(f)
	if err != nil {
		return err
	}
	arg := ""
	if len(f.positional) == 1 {
		arg = f.positional[0]
	}
	var found *pr
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		found = p
		return false, err
	})
	if err != nil {
		return err
	}
	if fields != nil {
		return g.writeJSON(found.export(fields))
	}
	st := found.State
	if st == "OPEN" && found.IsDraft {
		st = "DRAFT"
	}
	fmt.Fprintf(g.stdout, "title:\t%s\nstate:\t%s\nauthor:\t%s\nnumber:\t%d\nurl:\t%s\n--\n%s\n",
		found.Title, st, g.user(), found.Number, found.URL, found.Body)
	return nil
}
