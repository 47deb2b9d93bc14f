package github_test

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/github"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// sources are the two ways a job gets saga-lsp, each with its golden file.
var sources = map[string]github.Source{
	"release":     {Version: "v1.4.2", GoVersion: "1.26"},
	"from-source": {FromSource: true},
}

// TestWorkflowGolden: the rendered workflow, byte for byte (UPDATE_GOLDEN=1
// rewrites the goldens), carries a digest that holds.
func TestWorkflowGolden(t *testing.T) {
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			got, err := github.Render(src)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, filepath.Join("testdata", "saga-story."+name+".yml"), string(got))
			if !github.Pristine(got) {
				t.Error("the rendered workflow's digest does not hold")
			}
			edited := bytes.Replace(got, []byte("timeout-minutes: 120"), []byte("timeout-minutes: 30"), 1)
			if github.Pristine(edited) || github.Pristine(bytes.Replace(got, []byte("# saga-lsp-digest"), []byte("# digest"), 1)) {
				t.Error("an edited workflow passes for pristine")
			}
		})
	}
}

// TestWorkflowActionlint: both forms pass actionlint (with shellcheck on
// the run: scripts when it is installed).
func TestWorkflowActionlint(t *testing.T) {
	var shellcheck string
	if testkit.HasTool(t, "shellcheck", "Debian: apt-get install -y shellcheck; it checks the run: scripts") {
		shellcheck, _ = exec.LookPath("shellcheck")
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			content, err := github.Render(src)
			if err != nil {
				t.Fatal(err)
			}
			l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck, WorkingDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			errs, err := l.Lint(github.WorkflowPath, content, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range errs {
				t.Errorf("actionlint: %s:%d:%d: %s [%s]", github.WorkflowPath, e.Line, e.Column, e.Message, e.Kind)
			}
		})
	}
}

// TestWorkflowShape: what the issue asks of the job, read back through
// actionlint's parser rather than from the text.
func TestWorkflowShape(t *testing.T) {
	content, err := github.Render(sources["release"])
	if err != nil {
		t.Fatal(err)
	}
	w, errs := actionlint.Parse(content)
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs[0])
	}
	if w.RunName == nil || w.RunName.Value != github.RunName("${{ inputs.story }}", "${{ inputs.run-id }}") {
		t.Errorf("run-name %v", w.RunName)
	}
	var dispatch *actionlint.WorkflowDispatchEvent
	for _, e := range w.On {
		if d, ok := e.(*actionlint.WorkflowDispatchEvent); ok {
			dispatch = d
		}
	}
	if dispatch == nil || len(w.On) != 1 {
		t.Fatalf("on: %v, want workflow_dispatch only", w.On)
	}
	for _, in := range []string{github.InputStory, github.InputBase, github.InputRunID} {
		if i := dispatch.Inputs[in]; i == nil || i.Required == nil || !i.Required.Value {
			t.Errorf("input %s missing or not required", in)
		}
	}
	perms := map[string]string{}
	for k, s := range w.Permissions.Scopes {
		perms[k] = s.Value.Value
	}
	if len(perms) != 2 || perms["contents"] != "write" || perms["pull-requests"] != "write" {
		t.Errorf("permissions %v", perms)
	}
	if w.Concurrency == nil || !strings.Contains(w.Concurrency.Group.Value, "inputs.story") {
		t.Errorf("concurrency %+v: want a group per story", w.Concurrency)
	}
	job := w.Jobs["story"]
	if job == nil || job.TimeoutMinutes == nil {
		t.Fatalf("job story with timeout-minutes: %+v", job)
	}
	byID := map[string]*actionlint.Step{}
	for _, s := range job.Steps {
		if s.ID != nil {
			byID[s.ID.Value] = s
		}
		switch e := s.Exec.(type) {
		case *actionlint.ExecRun:
			// Inputs, secrets and tokens reach scripts through env: only.
			if strings.Contains(e.Run.Value, "${{") {
				t.Errorf("step %q interpolates an expression into its script", s.Name.Value)
			}
		case *actionlint.ExecAction:
			if strings.HasPrefix(e.Uses.Value, "actions/checkout@") {
				if e.Inputs["fetch-depth"].Value.Value != "0" || e.Inputs["persist-credentials"].Value.Value != "false" {
					t.Errorf("checkout %v: want full history, credentials not persisted", e.Inputs)
				}
			}
		}
		// The job token goes to the worker's step only.
		if s.Env != nil && s.ID != nil && s.ID.Value != github.WorkerStep {
			for _, v := range s.Env.Vars {
				if strings.Contains(v.Value.Value, "github.token") {
					t.Errorf("step %s is given the job token", s.ID.Value)
				}
			}
		}
	}
	worker := byID[github.WorkerStep]
	if worker == nil {
		t.Fatal("no worker step")
	}
	if run := worker.Exec.(*actionlint.ExecRun).Run.Value; !strings.Contains(run, `saga-lsp worker "$STORY" --base "$BASE"`) {
		t.Errorf("worker step runs %q", run)
	}
	env := map[string]string{}
	for _, v := range worker.Env.Vars {
		env[v.Name.Value] = v.Value.Value
	}
	if env["GH_TOKEN"] != "${{ github.token }}" || env["ANTHROPIC_API_KEY"] != "${{ secrets.ANTHROPIC_API_KEY }}" ||
		env["CLAUDE_CODE_OAUTH_TOKEN"] != "${{ secrets.CLAUDE_CODE_OAUTH_TOKEN }}" {
		t.Errorf("worker env %v", env)
	}
	install := byID["saga-lsp"].Exec.(*actionlint.ExecRun).Run.Value
	if !strings.Contains(install, "go install") || !strings.Contains(install, github.Module+"/cmd/saga-lsp@v1.4.2") {
		t.Errorf("install step %q", install)
	}
	if cc := byID["claude-code"].Exec.(*actionlint.ExecRun).Run.Value; cc != "npm install -g @anthropic-ai/claude-code@2.1.330" {
		t.Errorf("claude code step %q", cc)
	}
}

func TestRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.2.3": true, "v0.10.0": true, "v1.2.3-rc.1": true,
		"dev": false, "v1.2.3-4-gabcdef0": false, "v1.2.3-dirty": false, "v1.2.3-4-gabcdef0-dirty": false,
		"1.2.3": false, "v1.2": false, "abcdef0": false, "v01.2.3": false, "": false,
	} {
		if got := github.Release(v); got != want {
			t.Errorf("Release(%q) = %v, want %v", v, got, want)
		}
	}
	if _, err := github.ReleaseSource("dev", "go1.26.8"); err == nil || !strings.Contains(err.Error(), "--from-source") {
		t.Errorf("ReleaseSource(dev): %v", err)
	}
	if s, err := github.ReleaseSource("v1.2.3", "go1.26.8"); err != nil || s.GoVersion != "1.26" {
		t.Errorf("ReleaseSource(v1.2.3, go1.26.8) = %+v, %v", s, err)
	}
}
