package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var ghBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gh-standin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ghBin = filepath.Join(dir, "gh")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-o", ghBin, "github.com/saga-ai/saga-lsp/testdata/standin/gh")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the gh stand-in:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repo is a clone of a local bare repository ("origin") with a commit on
// main, pushed.
type repo struct {
	t     *testing.T
	root  string
	clone string
	env   []string
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
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GH_STANDIN_STATE=" + filepath.Join(root, "gh-state.json"),
		"GH_STANDIN_LOG=" + filepath.Join(root, "gh.log"),
	}
	r.git(root, "init", "-q", "--bare", "-b", "main", filepath.Join(root, "origin.git"))
	r.git(root, "init", "-q", "-b", "main", r.clone)
	r.git(r.clone, "remote", "add", "origin", filepath.Join(root, "origin.git"))
	r.git(r.clone, "commit", "-q", "--allow-empty", "-m", "initial")
	r.git(r.clone, "push", "-q", "origin", "main")
	return r
}

func (r *repo) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

type out struct {
	code           int
	stdout, stderr string
}

func (r *repo) gh(extraEnv []string, args ...string) out {
	r.t.Helper()
	cmd := exec.Command(ghBin, args...)
	cmd.Dir = r.clone
	cmd.Env = append(append([]string(nil), r.env...), extraEnv...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	o := out{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return o
}

func (r *repo) ok(args ...string) out {
	r.t.Helper()
	o := r.gh(nil, args...)
	if o.code != 0 {
		r.t.Fatalf("gh %v: exit %d\n%s%s", args, o.code, o.stdout, o.stderr)
	}
	return o
}

func TestPullRequestRoundTrip(t *testing.T) {
	r := newRepo(t)
	r.git(r.clone, "checkout", "-q", "-b", "story/add-logout")
	r.git(r.clone, "commit", "-q", "--allow-empty", "-m", "Start story")
	r.git(r.clone, "push", "-q", "-u", "origin", "story/add-logout")

	if o := r.ok("pr", "list", "--head", "story/add-logout", "--json", "number,url"); o.stdout != "[]\n" {
		t.Errorf("empty list %q", o.stdout)
	}
	url := "https://github.com/standin/origin/pull/1"
	o := r.ok("pr", "create", "--draft", "--title", "Story: add-logout", "--body", "Automated story PR <&>", "--base", "main")
	if o.stdout != url+"\n" {
		t.Errorf("create printed %q", o.stdout)
	}
	if o := r.ok("pr", "list", "--head", "story/add-logout", "--json", "number,url"); o.stdout != `[{"number":1,"url":"`+url+`"}]`+"\n" {
		t.Errorf("list %q", o.stdout)
	}
	if o := r.ok("pr", "list", "--head", "story/add-logout", "--state", "all", "--json", "number,url,isDraft,state", "--limit", "1"); o.stdout != `[{"isDraft":true,"number":1,"state":"OPEN","url":"`+url+`"}]`+"\n" {
		t.Errorf("list all %q", o.stdout)
	}
	if o := r.ok("pr", "list", "--head", "other", "--json", "number"); o.stdout != "[]\n" {
		t.Errorf("other head %q", o.stdout)
	}
	if o := r.ok("pr", "view", "story/add-logout", "--json", "url,isDraft,state"); o.stdout != `{"isDraft":true,"state":"OPEN","url":"`+url+`"}`+"\n" {
		t.Errorf("view %q", o.stdout)
	}
	if o := r.ok("pr", "view", "--json", "body,title"); o.stdout != `{"body":"Automated story PR <&>","title":"Story: add-logout"}`+"\n" {
		t.Errorf("view current branch %q", o.stdout)
	}
	// A second create for the same head is refused.
	o = r.gh(nil, "pr", "create", "--draft", "--title", "again", "--body", "")
	if o.code != 1 || o.stderr != "a pull request for branch \"story/add-logout\" into branch \"main\" already exists:\n"+url+"\n" {
		t.Errorf("duplicate create: %d %q", o.code, o.stderr)
	}
	o = r.ok("pr", "ready", "story/add-logout")
	if o.stderr != "✓ Pull request #1 is marked as \"ready for review\"\n" || o.stdout != "" {
		t.Errorf("ready: %q %q", o.stdout, o.stderr)
	}
	if o := r.ok("pr", "view", url, "--json", "isDraft"); o.stdout != `{"isDraft":false}`+"\n" {
		t.Errorf("after ready %q", o.stdout)
	}
	if o := r.ok("pr", "ready", "1"); o.stderr != "! Pull request #1 is already \"ready for review\"\n" {
		t.Errorf("ready again %q", o.stderr)
	}
	if o := r.gh(nil, "pr", "ready", "7"); o.code != 1 || !strings.Contains(o.stderr, "Could not resolve to a PullRequest with the number of 7") {
		t.Errorf("ready 7: %d %q", o.code, o.stderr)
	}
	if o := r.gh(nil, "pr", "view", "story/none", "--json", "url"); o.code != 1 || o.stderr != "no pull requests found for branch \"story/none\"\n" {
		t.Errorf("view none: %d %q", o.code, o.stderr)
	}
	if o := r.gh(nil, "pr", "list", "--json", "number,bogus"); o.code != 1 || !strings.HasPrefix(o.stderr, "Unknown JSON field: \"bogus\"\nAvailable fields:\n") {
		t.Errorf("bad field: %d %q", o.code, o.stderr)
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
	if len(lines) != 14 || json.Unmarshal([]byte(lines[0]), &first) != nil ||
		strings.Join(first.Args, " ") != "pr list --head story/add-logout --json number,url" || first.Cwd != r.clone {
		t.Errorf("log (%d lines): %s", len(lines), logData)
	}
}

func TestCreateRefusesBranchWithoutCommits(t *testing.T) {
	r := newRepo(t)
	// Pushed, but at main's commit.
	r.git(r.clone, "checkout", "-q", "-b", "story/empty")
	r.git(r.clone, "push", "-q", "origin", "story/empty")
	o := r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b")
	if o.code != 1 || o.stderr != "pull request create failed: GraphQL: No commits between main and story/empty (createPullRequest)\n" {
		t.Errorf("no commits: %d %q", o.code, o.stderr)
	}
	// Committed locally but not pushed.
	r.git(r.clone, "checkout", "-q", "-b", "story/local")
	r.git(r.clone, "commit", "-q", "--allow-empty", "-m", "local only")
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b", "--head", "story/local")
	if o.code != 1 || !strings.HasPrefix(o.stderr, "pull request create failed: GraphQL: Head sha can't be blank") ||
		!strings.Contains(o.stderr, "No commits between main and story/local") {
		t.Errorf("not pushed, --head: %d %q", o.code, o.stderr)
	}
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t", "--body", "b")
	if o.code != 1 || o.stderr != "aborted: you must first push the current branch to a remote, or use the --head flag\n" {
		t.Errorf("not pushed: %d %q", o.code, o.stderr)
	}
	// A branch behind main has no commits over it either.
	r.git(r.clone, "checkout", "-q", "main")
	r.git(r.clone, "commit", "-q", "--allow-empty", "-m", "main moves on")
	r.git(r.clone, "push", "-q", "origin", "main")
	o = r.gh(nil, "pr", "create", "--title", "t", "--body", "b", "--head", "story/empty")
	if o.code != 1 || !strings.Contains(o.stderr, "No commits between main and story/empty") {
		t.Errorf("behind main: %d %q", o.code, o.stderr)
	}
	// Title and body are required without a terminal.
	o = r.gh(nil, "pr", "create", "--draft", "--title", "t")
	if o.code != 1 || !strings.HasPrefix(o.stderr, "must provide `--title` and `--body`") {
		t.Errorf("no body: %d %q", o.code, o.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(r.root, "gh-state.json")); strings.Contains(string(data), "number") {
		t.Errorf("a PR was recorded: %s", data)
	}
}

func TestAuth(t *testing.T) {
	r := newRepo(t)
	o := r.ok("auth", "status")
	if !strings.Contains(o.stdout, "✓ Logged in to github.com account saga-standin") {
		t.Errorf("auth status %q", o.stdout)
	}
	none := []string{"GH_STANDIN_AUTH=none"}
	o = r.gh(none, "auth", "status")
	if o.code != 1 || o.stderr != "You are not logged into any GitHub hosts. To log in, run: gh auth login\n" || o.stdout != "" {
		t.Errorf("logged out: %d %q %q", o.code, o.stdout, o.stderr)
	}
	o = r.gh(none, "pr", "list", "--head", "x", "--json", "number")
	if o.code != 4 || !strings.HasPrefix(o.stderr, "To get started with GitHub CLI, please run:  gh auth login") {
		t.Errorf("pr list logged out: %d %q", o.code, o.stderr)
	}
}

func TestUnknownCommandsAndMissingState(t *testing.T) {
	r := newRepo(t)
	for _, args := range [][]string{{"repo", "view"}, {"pr", "merge", "1"}, {"pr", "list", "--frob"}, {"auth", "login"}} {
		if o := r.gh(nil, args...); o.code != 1 || o.stderr == "" {
			t.Errorf("gh %v: %d %q", args, o.code, o.stderr)
		}
	}
	o := r.gh([]string{"GH_STANDIN_STATE="}, "pr", "list", "--json", "number")
	if o.code != 1 || !strings.Contains(o.stderr, "GH_STANDIN_STATE is not set") {
		t.Errorf("no state: %d %q", o.code, o.stderr)
	}
	// A github.com remote names the repository.
	r.git(r.clone, "remote", "set-url", "origin", "git@github.com:saga-ai/demo.git")
	if o := r.ok("pr", "list", "--json", "url"); o.stdout != "[]\n" {
		t.Errorf("github remote list %q", o.stdout)
	}
}
