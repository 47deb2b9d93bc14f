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
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// The stand-in's machinery: flags as pflag parses them, auth, the git
// repository behind the current directory, the state file, JSON output.

// ---- flags (pflag-like) ----

type flagSpec struct {
	long, short string
	value       bool // takes a value
}

type flags struct {
	vals       map[string]string
	all        map[string][]string // every value of a repeated flag (-f a=1 -f b=2)
	set        map[string]bool
	positional []string
}

func parseFlags(cmd string, args []string, specs ...flagSpec) (*flags, error) {
	f := &flags{vals: map[string]string{}, all: map[string][]string{}, set: map[string]bool{}}
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
		f.all[spec.long] = append(f.all[spec.long], val)
		f.set[spec.long] = true
	}
	return f, nil
}

// ---- auth ----

// loggedIn: as `gh auth login` / `logout` left it in the state file, else
// as GH_STANDIN_AUTH says.
func (g *gh) loggedIn() bool {
	switch g.readState().Auth {
	case authIn:
		return true
	case authOut:
		return false
	}
	return g.getenv("GH_STANDIN_AUTH") != "none"
}

// The state file's "auth" after gh auth login / logout.
const (
	authIn  = "in"
	authOut = "out"
)

// readState is the state as last saved (saves are renames), without its
// lock; empty when there is none.
func (g *gh) readState() *state {
	st := &state{}
	if path := g.getenv("GH_STANDIN_STATE"); path != "" {
		if data, err := os.ReadFile(path); err == nil {
			json.Unmarshal(data, st)
		}
	}
	return st
}

// authLogin is `gh auth login`: without a terminal, only --with-token
// (the token read from stdin), as gh requires.
func (g *gh) authLogin(args []string) error {
	f, err := parseFlags("auth login", args, flagSpec{long: "with-token"}, flagSpec{long: "hostname", short: "h", value: true},
		flagSpec{long: "git-protocol", short: "p", value: true}, flagSpec{long: "web", short: "w"})
	if err != nil {
		return err
	}
	if f.vals["with-token"] != "true" {
		return fail(1, "--web or --with-token required when not running interactively")
	}
	token, _ := io.ReadAll(g.stdin)
	if strings.TrimSpace(string(token)) == "" {
		return fail(1, "failed to log in to github.com: no token given on standard input")
	}
	return g.withState(func(st *state) (bool, error) {
		st.Auth = authIn
		return true, nil
	})
}

// authLogout is `gh auth logout` of the one account.
func (g *gh) authLogout(args []string) error {
	if _, err := parseFlags("auth logout", args, flagSpec{long: "hostname", short: "h", value: true},
		flagSpec{long: "user", short: "u", value: true}); err != nil {
		return err
	}
	if !g.loggedIn() {
		return fail(1, "not logged in to any hosts")
	}
	if err := g.withState(func(st *state) (bool, error) {
		st.Auth = authOut
		return true, nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(g.stderr, "✓ Logged out of github.com account %s\n", g.user())
	return nil
}

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
	from := "GH_TOKEN"
	if g.readState().Auth == authIn {
		from = "keyring" // where gh auth login keeps the token
	}
	fmt.Fprintf(g.stdout, "github.com\n  ✓ Logged in to github.com account %s (%s)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n", g.user(), from)
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

// authRepo is repo once authenticated.
func (g *gh) authRepo(f *flags) (string, error) {
	if err := g.requireAuth(); err != nil {
		return "", err
	}
	return g.repo(f)
}

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
	// Its review (review.go): threads on lines, submitted reviews, and the
	// PR's own comments, as tests seed them in the state file.
	ReviewThreads []*thread  `json:"reviewThreads,omitempty"`
	Reviews       []*review  `json:"reviews,omitempty"`
	Comments      []*comment `json:"comments,omitempty"`
	// RequestedReviewers: the logins review was requested from (reply.go).
	RequestedReviewers []string `json:"requestedReviewers,omitempty"`
	// A merged PR's head commit, when and into which commit (land.go).
	HeadOid     string `json:"headOid,omitempty"`
	MergedAt    string `json:"mergedAt,omitempty"`
	MergeCommit string `json:"mergeCommit,omitempty"`
}

type state struct {
	PRs  []*pr    `json:"prs"`
	Runs []*wfRun `json:"runs,omitempty"` // GitHub Actions runs (actions.go)
	Auth string   `json:"auth,omitempty"` // authIn, authOut after gh auth login / logout; "" as GH_STANDIN_AUTH says
	// Collaborators: login → role (admin, maintain, write, triage, read),
	// what the collaborator-permission endpoint answers (review.go).
	Collaborators map[string]string `json:"collaborators,omitempty"`
	// RateLimited: after RateLimitAfter calls, the next n `gh api` calls
	// are refused for GitHub's rate limit (reply.go).
	RateLimited    int `json:"rateLimited,omitempty"`
	RateLimitAfter int `json:"rateLimitAfter,omitempty"` // calls that pass first
	// Seq numbers the comments the stand-in makes (reply.go).
	Seq int `json:"seq,omitempty"`
	// Repo: the repository's merge settings and CI; Checks: a commit's
	// own check runs (land.go).
	Repo   *repoSettings          `json:"repository,omitempty"`
	Checks map[string][]*checkRun `json:"checks,omitempty"`
	// Queue: the default branch's merge queue, in order; Stacks: the
	// native stacks of pull requests (queue.go).
	Queue  []*queueEntry `json:"queue,omitempty"`
	Stacks []*stackDef   `json:"stacks,omitempty"`
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

// jsonFieldsOf is --json's list of fields, nil without --json.
func jsonFieldsOf(f *flags) ([]string, error) {
	if !f.set["json"] {
		return nil, nil
	}
	return fieldList(f.vals["json"])
}

func fieldList(spec string) ([]string, error) { return fieldsOf(spec, jsonFields) }

// fieldsOf is --json's list of fields among those available (sorted, as gh
// lists them).
func fieldsOf(spec string, available []string) ([]string, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fail(1, "Specify one or more comma-separated fields for `--json`:\n  %s", strings.Join(available, "\n  "))
	}
	var out []string
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(available, f) {
			return nil, fail(1, "Unknown JSON field: %q\nAvailable fields:\n  %s", f, strings.Join(available, "\n  "))
		}
		out = append(out, f)
	}
	return out, nil
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
