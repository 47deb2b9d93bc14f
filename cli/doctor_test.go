//go:build unix

package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/doctor"
)

// doctorMachine is a machine made of stand-ins: a PATH holding only the
// programs put there (git always, the real one), a HOME of its own, and a
// repository with .saga/ and an origin.
type doctorMachine struct {
	bin, home, repo string
}

func newDoctorMachine(t *testing.T) *doctorMachine {
	t.Helper()
	m := &doctorMachine{bin: t.TempDir(), home: t.TempDir()}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	if err := os.Symlink(git, filepath.Join(m.bin, "git")); err != nil {
		t.Fatal(err)
	}
	m.repo = testkit.CopyExample(t, "workspace")
	testkit.InitRepo(t, m.repo)
	testkit.BareOrigin(t, m.repo)
	return m
}

// script puts a shell script called name on the machine's PATH.
func (m *doctorMachine) script(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(m.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// link puts the program at target on the machine's PATH as name.
func (m *doctorMachine) link(t *testing.T, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(m.bin, name)); err != nil {
		t.Fatal(err)
	}
}

// healthy gives the machine everything a run needs: a claude new enough
// and logged in, tmux, gh logged in (the stand-in), a sandbox that works.
func (m *doctorMachine) healthy(t *testing.T) {
	t.Helper()
	m.script(t, "claude", `echo "2.1.330 (Claude Code)"`)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	m.link(t, "tmux", tmux)
	m.link(t, "gh", testkit.Build(t, "./testdata/standin/gh"))
	m.script(t, "bwrap", "exit 0")
	m.script(t, "socat", "exit 0")
	testkit.WriteFiles(t, m.home, map[string]string{".claude/.credentials.json": `{"claudeAiOauth": {"accessToken": "sk-ant-secret-never-shown"}}`})
}

func (m *doctorMachine) doctor(t *testing.T, extra []string, args ...string) testkit.Result {
	t.Helper()
	env := append(testkit.CleanEnv(), "PATH="+m.bin, "HOME="+m.home, "GH_STANDIN_STATE="+filepath.Join(m.home, "gh-state.json"))
	env = append(env, extra...)
	return testkit.Run(t, m.repo, env, "", testkit.Binary(t), append([]string{"doctor"}, args...)...)
}

func doctorJSON(t *testing.T, r testkit.Result) (doctor.Report, map[string]doctor.Check) {
	t.Helper()
	var rep doctor.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("doctor --format json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	byName := map[string]doctor.Check{}
	for _, c := range rep.Checks {
		byName[c.Name] = c
	}
	return rep, byName
}

// A machine with what a run needs: every check OK, exit 0, no secret
// printed; the JSON is the report, every check with a name, a level and a
// detail.
func TestDoctorHealthy(t *testing.T) {
	m := newDoctorMachine(t)
	m.healthy(t)
	r := m.doctor(t, nil)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Everything a run needs is here.") {
		t.Fatalf("doctor: exit %d, want 0 and everything here\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "sk-ant") || strings.Contains(r.Stdout, `\t`) {
		t.Errorf("doctor printed a secret or an escaped tab:\n%s", r.Stdout)
	}
	j := m.doctor(t, nil, "--format", "json")
	rep, byName := doctorJSON(t, j)
	if j.Code != 0 || rep.Errors != 0 || rep.On != "tmux" {
		t.Fatalf("doctor --format json: exit %d, %d errors, on %q\n%s", j.Code, rep.Errors, rep.On, j.Stdout)
	}
	for _, name := range []string{"claude", "claude login", "tmux", "git", "repository", "origin", "gh", "gh login", "sandbox", "socat", "hook"} {
		c, ok := byName[name]
		if !ok || c.Level != doctor.OK || c.Detail == "" {
			t.Errorf("check %q: %+v (present %v), want ok with a detail\n%s", name, c, ok, j.Stdout)
		}
	}
	if c := byName["claude"]; !strings.Contains(c.Detail, "Claude Code 2.1.330") {
		t.Errorf("claude: %q, want its version", c.Detail)
	}
	if c := byName["gh login"]; !strings.Contains(c.Detail, "logged in to github.com account saga-standin") {
		t.Errorf("gh login: %q", c.Detail)
	}
	// How land merges here: the repository's first allowed method, then
	// its merge queue once the default branch has one.
	if c := byName["land method"]; c.Level != doctor.OK || !strings.HasPrefix(c.Detail, "merge into main (the repository allows: merge, squash, rebase") {
		t.Errorf("land method: %+v", c)
	}
	testkit.WriteFiles(t, m.home, map[string]string{"gh-state.json": `{"prs": [], "repository": {"mergeQueue": true}}`})
	if _, byName := doctorJSON(t, m.doctor(t, nil, "--format", "json")); !strings.HasPrefix(byName["land method"].Detail, "the merge queue of main") {
		t.Errorf("land method with a merge queue: %+v", byName["land method"])
	}
	var raw map[string]any
	json.Unmarshal([]byte(j.Stdout), &raw)
	for _, k := range []string{"on", "checks", "errors", "warnings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("the JSON has no %q: %s", k, j.Stdout)
		}
	}
}

// What a newcomer's machine lacks, each said with what to do: a claude too
// old for fail-closed hooks and not logged in, gh logged out (a warning for
// runs here: no PRs), tmux missing — errors apart from warnings, exit 1.
func TestDoctorReportsWhatIsMissing(t *testing.T) {
	m := newDoctorMachine(t)
	m.script(t, "claude", `echo "2.1.200 (Claude Code)"`)
	m.link(t, "gh", testkit.Build(t, "./testdata/standin/gh"))
	m.script(t, "bwrap", "exit 0")
	m.script(t, "socat", "exit 0")
	out := []string{"GH_STANDIN_AUTH=none"}
	r := m.doctor(t, out)
	for _, want := range []string{
		"error     claude       Claude Code 2.1.200 (" + filepath.Join(m.bin, "claude") + ") is too old: 2.1.295 or later",
		"→ update it: claude update",
		"error     claude login Claude Code is not logged in",
		"error     tmux         tmux is not installed",
		"warning   gh login     gh is not logged in to GitHub: workers open no PR for their stories",
		"→ gh auth login",
		"3 errors, 1 warning: a run refuses to start",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("doctor lacks %q", want)
		}
	}
	if r.Code != 1 {
		t.Errorf("doctor: exit %d, want 1", r.Code)
	}
	if t.Failed() {
		t.Logf("doctor:\n%s%s", r.Stdout, r.Stderr)
	}
	j := m.doctor(t, out, "--format", "json")
	rep, byName := doctorJSON(t, j)
	if j.Code != 1 || rep.Errors != 3 || rep.Warnings != 1 {
		t.Errorf("doctor --format json: exit %d, %d errors, %d warnings; want 1, 3, 1\n%s", j.Code, rep.Errors, rep.Warnings, j.Stdout)
	}
	for name, level := range map[string]doctor.Level{"claude": doctor.Error, "tmux": doctor.Error, "gh login": doctor.Warning, "gh": doctor.OK} {
		if c := byName[name]; c.Level != level || (level != doctor.OK && c.Fix == "") {
			t.Errorf("check %q: %+v, want %s with a fix", name, c, level)
		}
	}
	// Runs on GitHub Actions need gh logged in and the workflow: errors
	// there, and claude, tmux's sandbox are the runner's.
	g := m.doctor(t, out, "--on", "github", "--format", "json")
	_, byName = doctorJSON(t, g)
	for name, level := range map[string]doctor.Level{"gh login": doctor.Error, "workflow": doctor.Error, "claude": doctor.OK} {
		if c := byName[name]; c.Level != level {
			t.Errorf("--on github: check %q: %+v, want %s\n%s", name, c, level, g.Stdout)
		}
	}
	if !strings.Contains(byName["workflow"].Fix, "saga-lsp install --github-actions") {
		t.Errorf("--on github: the workflow's fix: %q", byName["workflow"].Fix)
	}
}

// A gh that never answers (offline, a proxy that swallows the request)
// is given the timeout, and its login is reported as not checked, never
// as logged in nor waited for; the other checks still report.
func TestDoctorBoundsAHangingProgram(t *testing.T) {
	m := newDoctorMachine(t)
	m.healthy(t)
	os.Remove(filepath.Join(m.bin, "gh"))
	// The shell's child keeps the output open after the shell is killed.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	m.script(t, "gh", sleep+" 60; :")
	r := m.doctor(t, nil, "--timeout", "1s", "--format", "json")
	rep, byName := doctorJSON(t, r)
	c := byName["gh login"]
	if c.Level != doctor.Unchecked || !strings.Contains(c.Detail, "did not answer (timed out after 1s; offline?)") {
		t.Errorf("gh login: %+v, want unchecked after the timeout", c)
	}
	if r.Code != 0 || rep.Errors != 0 || byName["claude"].Level != doctor.OK {
		t.Errorf("doctor: exit %d, %d errors; want 0, 0\n%s", r.Code, rep.Errors, r.Stdout)
	}
}
