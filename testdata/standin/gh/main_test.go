package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// repo is a clone of a local bare repository ("origin") with a commit on
// main, pushed.
type repo struct {
	t     *testing.T
	root  string
	clone string
	env   []string // the stand-in's
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, root: root, clone: filepath.Join(root, "work")}
	r.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1",
		"GH_STANDIN_STATE=" + filepath.Join(root, "gh-state.json"),
		"GH_STANDIN_LOG=" + filepath.Join(root, "gh.log"),
	}
	testkit.InitRepo(t, r.clone)
	testkit.BareOrigin(t, r.clone)
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	return testkit.Git(r.t, r.clone, args...)
}

func (r *repo) gh(extraEnv []string, args ...string) testkit.Result {
	r.t.Helper()
	return testkit.Run(r.t, r.clone, append(slices.Clone(r.env), extraEnv...), "", testkit.Build(r.t, "./testdata/standin/gh"), args...)
}

func (r *repo) ok(args ...string) testkit.Result {
	r.t.Helper()
	o := r.gh(nil, args...)
	if o.Code != 0 {
		r.t.Fatalf("gh %v: exit %d\n%s%s", args, o.Code, o.Stdout, o.Stderr)
	}
	return o
}

func TestPullRequestRoundTrip(t *testing.T) {
	r := newRepo(t)
	r.git("checkout", "-q", "-b", "story/add-logout")
	r.git("commit", "-q", "--allow-empty", "-m", "Start story")
	r.git("push", "-q", "-u", "origin", "story/add-logout")

	if o := r.ok("pr", "list", "--head", "story/add-logout", "--json", "number,url"); o.Stdout != "[]\n" {
		t.Errorf("empty list %q", o.Stdout)
	}
	url := "https://github.com/standin/origin/pull/1"
	o := r.ok("pr", "create", "--draft", "--title", "Story: add-logout", "--body", "Automated story PR <&>", "--base", "main")
	if o.Stdout != url+"\n" {
		t.Errorf("create printed %q", o.Stdout)
	}
	if o := r.ok("pr", "list", "--head", "story/add-logout", "--json", "number,url"); o.Stdout != `[{"number":1,"url":"`+url+`"}]`+"\n" {
		t.Errorf("list %q", o.Stdout)
	}
	if o := r.ok("pr", "list", "--head", "story/add-logout", "--state", "all", "--json", "number,url,isDraft,state", "--limit", "1"); o.Stdout != `[{"isDraft":true,"number":1,"state":"OPEN","url":"`+url+`"}]`+"\n" {
		t.Errorf("list all %q", o.Stdout)
	}
	if o := r.ok("pr", "list", "--head", "other", "--json", "number"); o.Stdout != "[]\n" {
		t.Errorf("other head %q", o.Stdout)
	}
	if o := r.ok("pr", "view", "story/add-logout", "--json", "url,isDraft,state"); o.Stdout != `{"isDraft":true,"state":"OPEN","url":"`+url+`"}`+"\n" {
		t.Errorf("view %q", o.Stdout)
	}
	if o := r.ok("pr", "view", "--json", "body,title"); o.Stdout != `{"body":"Automated story PR <&>","title":"Story: add-logout"}`+"\n" {
		t.Errorf("view current branch %q", o.Stdout)
	}
	// A second create for the same head is refused.
	o = r.gh(nil, "pr", "create", "--draft", "--title", "again", "--body", "")
	if o.Code != 1 || o.Stderr != "a pull request for branch \"story/add-logout\" into branch \"main\" already exists:\n"+url+"\n" {
		t.Errorf("duplicate create: %d %q", o.Code, o.Stderr)
	}
	o = r.ok("pr", "ready", "story/add-logout")
	if o.Stderr != "✓ Pull request #1 is marked as \"ready for review\"\n" || o.Stdout != "" {
		t.Errorf("ready: %q %q", o.Stdout, o.Stderr)
	}
	if o := r.ok("pr", "view", url, "--json", "isDraft"); o.Stdout != `{"isDraft":false}`+"\n" {
		t.Errorf("after ready %q", o.Stdout)
	}
	if o := r.ok("pr", "ready", "1"); o.Stderr != "! Pull request #1 is already \"ready for review\"\n" {
		t.Errorf("ready again %q", o.Stderr)
	}
	if o := r.ok("pr", "edit", url, "--body", "New body\n| a | b |"); o.Stdout != url+"\n" {
		t.Errorf("edit printed %q", o.Stdout)
	}
	if o := r.ok("pr", "view", "1", "--json", "body,title"); o.Stdout != `{"body":"New body\n| a | b |","title":"Story: add-logout"}`+"\n" {
		t.Errorf("after edit %q", o.Stdout)
	}
	if o := r.gh(nil, "pr", "edit", "1"); o.Code != 1 || !strings.Contains(o.Stderr, "specify at least one field to edit") {
		t.Errorf("edit without fields: %d %q", o.Code, o.Stderr)
	}
	if o := r.gh(nil, "pr", "ready", "7"); o.Code != 1 || !strings.Contains(o.Stderr, "Could not resolve to a PullRequest with the number of 7") {
		t.Errorf("ready 7: %d %q", o.Code, o.Stderr)
	}
	if o := r.gh(nil, "pr", "view", "story/none", "--json", "url"); o.Code != 1 || o.Stderr != "no pull requests found for branch \"story/none\"\n" {
		t.Errorf("view none: %d %q", o.Code, o.Stderr)
	}
	if o := r.gh(nil, "pr", "list", "--json", "number,bogus"); o.Code != 1 || !strings.HasPrefix(o.Stderr, "Unknown JSON field: \"bogus\"\nAvailable fields:\n") {
		t.Errorf("bad field: %d %q", o.Code, o.Stderr)
	}

	// State file and log.
	var st state
	data, err := os.ReadFile(filepath.Join(r.root, "gh-state.json"))
	if err != nil || json.Unmarshal(data, &st) != nil || len(st.PRs) != 1 {
		t.Fatalf("state %s %v", data, err)
	}
	p := st.PRs[0]
	if p.Number != 1 || p.URL != url || p.HeadRefName != "story/add-logout" || p.BaseRefName != "main" ||
		p.Title != "Story: add-logout" || p.IsDraft || p.State != "OPEN" {
		t.Errorf("stored PR %+v", p)
	}
	logData, _ := os.ReadFile(filepath.Join(r.root, "gh.log"))
	lines := strings.Split(strings.TrimSpace(string(logData)), "\n")
	var first struct {
		Args     []string `json:"args"`
		Cwd      string   `json:"cwd"`
		ExitCode int      `json:"exitCode"`
	}
	if len(lines) != 17 || json.Unmarshal([]byte(lines[0]), &first) != nil ||
		strings.Join(first.Args, " ") != "pr list --head story/add-logout --json number,url" || first.Cwd != r.clone {
		t.Errorf("log (%d lines): %s", len(lines), logData)
	}
}

func TestCreateRefusesBranchWithoutCommits(t *testing.T) {
	r := newRepo(t)
	// Pushed, but at main's commit.
	r.git("checkout", "-q", "-b", "story/empty")
	r.git("push", "-q", "origin", "story/empty")
	o := r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b")
	if o.Code != 1 || o.Stderr != "pull request create failed: GraphQL: No commits between main and story/empty (createPullRequest)\n" {
		t.Errorf("no commits: %d %q", o.Code, o.Stderr)
	}
	// Committed locally but not pushed.
	r.git("checkout", "-q", "-b", "story/local")
	r.git("commit", "-q", "--allow-empty", "-m", "local only")
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b", "--head", "story/local")
	if o.Code != 1 || !strings.HasPrefix(o.Stderr, "pull request create failed: GraphQL: Head sha can't be blank") ||
		!strings.Contains(o.Stderr, "No commits between main and story/local") {
		t.Errorf("not pushed, --head: %d %q", o.Code, o.Stderr)
	}
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b")
	if o.Code != 1 || o.Stderr != "aborted: you must first push the current branch to a remote, or use the --head flag\n" {
		t.Errorf("not pushed: %d %q", o.Code, o.Stderr)
	}
	// A branch behind main has no commits over it either.
	r.git("checkout", "-q", "main")
	r.git("commit", "-q", "--allow-empty", "-m", "main moves on")
	r.git("push", "-q", "origin", "main")
	o = r.gh(nil, "pr", "create", "--title", "t", "--body", "b", "--head", "story/empty")
	if o.Code != 1 || !strings.Contains(o.Stderr, "No commits between main and story/empty") {
		t.Errorf("behind main: %d %q", o.Code, o.Stderr)
	}
	// Title and body are required without a terminal.
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t")
	if o.Code != 1 || !strings.HasPrefix(o.Stderr, "must provide `--title` and `--body`") {
		t.Errorf("no body: %d %q", o.Code, o.Stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(r.root, "gh-state.json")); strings.Contains(string(data), "number") {
		t.Errorf("a PR was recorded: %s", data)
	}
}

func TestAuth(t *testing.T) {
	r := newRepo(t)
	o := r.ok("auth", "status")
	if !strings.Contains(o.Stdout, "✓ Logged in to github.com account saga-standin") {
		t.Errorf("auth status %q", o.Stdout)
	}
	none := []string{"GH_STANDIN_AUTH=none"}
	o = r.gh(none, "auth", "status")
	if o.Code != 1 || o.Stderr != "You are not logged into any GitHub hosts. To log in, run: gh auth login\n" || o.Stdout != "" {
		t.Errorf("logged out: %d %q %q", o.Code, o.Stdout, o.Stderr)
	}
	o = r.gh(none, "pr", "list", "--head", "x", "--json", "number")
	if o.Code != 4 || !strings.HasPrefix(o.Stderr, "To get started with GitHub CLI, please run:  gh auth login") {
		t.Errorf("pr list logged out: %d %q", o.Code, o.Stderr)
	}

	// gh auth logout / login keep the login for every later invocation.
	o = r.ok("auth", "logout")
	if o.Stderr != "✓ Logged out of github.com account saga-standin\n" {
		t.Errorf("logout: %q", o.Stderr)
	}
	if o = r.gh(nil, "auth", "status"); o.Code != 1 || o.Stderr != "You are not logged into any GitHub hosts. To log in, run: gh auth login\n" {
		t.Errorf("status after logout: %d %q", o.Code, o.Stderr)
	}
	if o = r.gh(nil, "pr", "list", "--json", "number"); o.Code != 4 {
		t.Errorf("pr list after logout: %d %q", o.Code, o.Stderr)
	}
	if o = r.gh(nil, "auth", "logout"); o.Code != 1 || o.Stderr != "not logged in to any hosts\n" {
		t.Errorf("second logout: %d %q", o.Code, o.Stderr)
	}
	if o = r.gh(nil, "auth", "login"); o.Code != 1 || !strings.Contains(o.Stderr, "--with-token required when not running interactively") {
		t.Errorf("login without a token: %d %q", o.Code, o.Stderr)
	}
	o = testkit.Run(t, r.clone, r.env, "gho_standin\n", testkit.Build(t, "./testdata/standin/gh"), "auth", "login", "--with-token")
	if o.Code != 0 {
		t.Fatalf("login --with-token: %d %q", o.Code, o.Stderr)
	}
	// Logged in again: the token's login wins over GH_STANDIN_AUTH=none too.
	if o = r.gh(none, "auth", "status"); o.Code != 0 || !strings.Contains(o.Stdout, "account saga-standin (keyring)") {
		t.Errorf("status after login: %d %q %q", o.Code, o.Stdout, o.Stderr)
	}
}

func TestUnknownCommandsAndMissingState(t *testing.T) {
	r := newRepo(t)
	for _, args := range [][]string{{"repo", "view"}, {"pr", "merge", "1"}, {"pr", "list", "--frob"}, {"auth", "login"}} {
		if o := r.gh(nil, args...); o.Code != 1 || o.Stderr == "" {
			t.Errorf("gh %v: %d %q", args, o.Code, o.Stderr)
		}
	}
	o := r.gh([]string{"GH_STANDIN_STATE="}, "pr", "list", "--json", "number")
	if o.Code != 1 || !strings.Contains(o.Stderr, "GH_STANDIN_STATE is not set") {
		t.Errorf("no state: %d %q", o.Code, o.Stderr)
	}
	// A github.com remote names the repository.
	r.git("remote", "set-url", "origin", "git@github.com:saga-ai/demo.git")
	if o := r.ok("pr", "list", "--json", "url"); o.Stdout != "[]\n" {
		t.Errorf("github remote list %q", o.Stdout)
	}
}
