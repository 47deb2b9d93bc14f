package github

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
)

// The workflow: its file, its inputs (`gh workflow run saga-story.yml -f
// story=… -f base=… -f run-id=…`) and the name of the job's run.
const (
	WorkflowFile = "saga-story.yml"
	WorkflowPath = ".github/workflows/" + WorkflowFile // from the repository's top

	InputStory = "story"  // the story's id
	InputBase  = "base"   // the pushed branch it starts from
	InputRunID = "run-id" // saga-lsp's id of the dispatch (RunName)
	// InputReview "true" makes the job a review round: the worker runs
	// with --review (docs/review.md#on-github-actions). Workflows written
	// before it lack it (TakesReview).
	InputReview = "review"

	// WorkerStep is the id of the step that runs the worker.
	WorkerStep = "worker"
	// ArtifactPrefix starts the name of the artifact holding a run's record
	// and events: saga-run-<run-id>.
	ArtifactPrefix = "saga-run-"
	// TimeoutMinutes bounds a job (GitHub-hosted jobs stop at 6 h anyway):
	// the worker's own --max-time (60 min by default) and its end step,
	// with room for installing.
	TimeoutMinutes = 120
)

// Module is saga-lsp's Go module, what a release job installs.
const Module = "github.com/saga-ai/saga-lsp"

// RunName is the name GitHub gives a dispatched job's run (the workflow's
// run-name; `gh run list` shows it as displayTitle): the one way to find
// the run a dispatch created, never its timing.
func RunName(story, runID string) string { return "saga story " + story + " run " + runID }

// Source says how a job gets saga-lsp: a release, pinned, or built from
// the checked-out commit of saga-lsp's own repository.
type Source struct {
	Version    string // a release (Release): `go install …@Version`
	FromSource bool   // build ./cmd/saga-lsp from the checked-out commit instead
	GoVersion  string // the Go release (major.minor, "1.26") that builds a release
}

// releaseVersion is a release tag: vMAJOR.MINOR.PATCH, perhaps with a
// pre-release; what `git describe` adds to a commit past a tag
// (-N-gHASH) or to a dirty tree is no release.
// Compiled where used, not at init (as workflowSource).
const (
	releaseVersion = `^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`
	describeSuffix = `-[0-9]+-g[0-9a-f]+|dirty`
	goMinor        = `^go?(1\.[0-9]+)`
)

// Release tells whether version (cli.Version, set by the build) names a
// release that `go install …@version` can fetch.
func Release(version string) bool {
	return regexp.MustCompile(releaseVersion).MatchString(version) && !regexp.MustCompile(describeSuffix).MatchString(version)
}

// NotReleaseError refuses to write a workflow that could not pin the
// saga-lsp it installs.
type NotReleaseError struct{ Version string }

func (e *NotReleaseError) Error() string {
	return fmt.Sprintf("this saga-lsp (version %s) is not a release and recorded no commit, so the workflow could not install the same one on the runner: "+
		"install a release (go install %s/cmd/saga-lsp@vX.Y.Z) and run it again, or build it in a git clone of saga-lsp with its commit recorded (Go's default; not -buildvcs=false), "+
		"or, in saga-lsp's own repository, pass --from-source to build saga-lsp on the runner from the checked-out commit", e.Version, Module)
}

// ReleaseSource is the source of a job installing release version, built
// with the Go of goVersion (runtime.Version() of the binary: "go1.26.8").
func ReleaseSource(version, goVersion string) (Source, error) {
	if !Release(version) {
		return Source{}, &NotReleaseError{Version: version}
	}
	m := regexp.MustCompile(goMinor).FindStringSubmatch(goVersion)
	if m == nil {
		return Source{}, fmt.Errorf("cannot tell the Go release from %q", goVersion)
	}
	return Source{Version: version, GoVersion: m[1]}, nil
}

// digestPrefix starts the line holding a written workflow's digest: the
// SHA-256 of the file without that line. A file whose digest holds was
// written by saga-lsp and not edited since.
const digestPrefix = "# saga-lsp-digest: sha256:"

// Render is the workflow for source, digest included.
func Render(src Source) ([]byte, error) {
	if !src.FromSource && (!Release(src.Version) || src.GoVersion == "") {
		return nil, fmt.Errorf("render %s: a release version and its Go release, or --from-source", WorkflowFile)
	}
	var b bytes.Buffer
	tmpl, err := template.New(WorkflowFile).Delims("{%", "%}").Parse(workflowSource)
	if err != nil {
		return nil, fmt.Errorf("the workflow template: %w", err)
	}
	err = tmpl.Execute(&b, struct {
		Source
		Module, ClaudeCode, ClaudeVersion, APIKey, OAuthToken string
		Timeout                                               int
		Worker, ArtifactPrefix, RunName                       string
		SessionPrefix, OutputFile                             string
		Inputs                                                [4]string
	}{
		Source: src, Module: Module, ClaudeCode: claudecode.NPMPackage, ClaudeVersion: claudecode.Version,
		APIKey: claudecode.EnvAPIKey, OAuthToken: claudecode.EnvOAuthToken, Timeout: TimeoutMinutes,
		Worker: WorkerStep, ArtifactPrefix: ArtifactPrefix,
		RunName: RunName("${{ inputs."+InputStory+" }}", "${{ inputs."+InputRunID+" }}"),
		Inputs:  [4]string{InputStory, InputBase, InputRunID, InputReview},
		// The session as `run` names it in tmux: status and follow read it.
		SessionPrefix: runs.StorySessionPrefix, OutputFile: runs.OutputFile("$SAGA_SESSION_DIR", "$session"),
	})
	if err != nil {
		return nil, err
	}
	return withDigest(b.Bytes()), nil
}

// withDigest fills in the digest line of content.
func withDigest(content []byte) []byte {
	body, _ := withoutDigest(content)
	sum := sha256.Sum256(body)
	return bytes.Replace(content, []byte(digestPrefix+"\n"), []byte(digestPrefix+hex.EncodeToString(sum[:])+"\n"), 1)
}

// withoutDigest is content without its digest line, and the digest it
// held ("" when it has no digest line).
func withoutDigest(content []byte) (body []byte, digest string) {
	for line := range bytes.Lines(content) {
		if rest, ok := bytes.CutPrefix(line, []byte(digestPrefix)); ok {
			i := bytes.Index(content, line)
			return append(append([]byte{}, content[:i]...), content[i+len(line):]...), strings.TrimSpace(string(rest))
		}
	}
	return content, ""
}

// Pristine tells whether content is a workflow saga-lsp wrote, unedited
// since (whichever saga-lsp version wrote it).
func Pristine(content []byte) bool {
	body, digest := withoutDigest(content)
	if digest == "" {
		return false
	}
	sum := sha256.Sum256(body)
	return digest == hex.EncodeToString(sum[:])
}

// The workflow. Inputs reach `run:` scripts only through `env:` (an
// input interpolated into a script is a script injection); secrets and the
// job token only the steps that need them; the worker keeps GH_TOKEN and
// the git credential helper from the agent (runs/worker/agentenv.go).
// Parsed where rendered, not at init: every start of saga-lsp, the
// hook's included, would pay for it.
const workflowSource = `# saga-story.yml: one SAGA story run end to end by saga-lsp's worker on a
# GitHub-hosted runner, ending as a pull request. ` + "`saga-lsp run <story> --on github`" + `
# dispatches it; saga-lsp's docs/github-actions.md says what a repository
# sets up once.
#
# Written by ` + "`saga-lsp install --github-actions`" + ` ({%if .FromSource%}saga-lsp built from source{%else%}saga-lsp {%.Version%}{%end%}). saga-lsp
# neither replaces nor removes this file once it has been edited (unless
# --force): the digest below tells.
` + digestPrefix + `
name: saga-story
run-name: "{%.RunName%}"

on:
  workflow_dispatch:
    inputs:
      {%index .Inputs 0%}:
        description: The story's id (.saga/stories/<id>)
        required: true
        type: string
      {%index .Inputs 1%}:
        description: The pushed branch the story starts from
        required: true
        type: string
      {%index .Inputs 2%}:
        description: saga-lsp's random id of this dispatch (in the run's name, which saga-lsp finds the run by)
        required: true
        type: string
      {%index .Inputs 3%}:
        description: Address the review of the story's pull request (saga-lsp run <story> --review)
        required: false
        type: boolean
        default: false

permissions:
  contents: write
  pull-requests: write

# One run of a story at a time: a second dispatch waits for the first.
concurrency:
  group: saga-story-${{ inputs.{%index .Inputs 0%} }}
  cancel-in-progress: false

defaults:
  run:
    shell: bash

jobs:
  story:
    name: ${{ inputs.{%index .Inputs 0%} }}
    runs-on: ubuntu-24.04
    timeout-minutes: {%.Timeout%}
    steps:
      - name: Check the inputs
        id: inputs
        env:
          STORY: ${{ inputs.{%index .Inputs 0%} }}
          BASE: ${{ inputs.{%index .Inputs 1%} }}
          RUN_ID: ${{ inputs.{%index .Inputs 2%} }}
        run: |
          # The values are never echoed: a bad one could hold workflow commands.
          if ! [[ "$STORY" =~ ^[a-z0-9]+(-[a-z0-9]+)*(--[a-z0-9]+(-[a-z0-9]+)*)*$ ]]; then
            echo "::error title=saga-lsp: bad input::the input story is not a story id (lowercase letters and digits in groups joined by dashes)"
            exit 1
          fi
          if ! git check-ref-format "refs/heads/$BASE"; then
            echo "::error title=saga-lsp: bad input::the input base is not a branch name"
            exit 1
          fi
          if ! [[ "$RUN_ID" =~ ^[0-9]+-[0-9a-f]{32}$ ]]; then
            echo "::error title=saga-lsp: bad input::the input run-id is not an id saga-lsp generates (milliseconds, a dash, 32 hexadecimal digits)"
            exit 1
          fi

      - name: Check the Claude Code secret
        id: secret
        env:
          {%.APIKey%}: ${{ secrets.{%.APIKey%} }}
          {%.OAuthToken%}: ${{ secrets.{%.OAuthToken%} }}
        run: |
          if [ -z "${%.APIKey%}" ] && [ -z "${%.OAuthToken%}" ]; then
            echo "::error title=saga-lsp: no Claude Code secret::neither the secret {%.APIKey%} nor {%.OAuthToken%} is set: add one under the repository's Settings → Secrets and variables → Actions"
            exit 1
          fi

      - name: Check out
        uses: actions/checkout@v6
        with:
          fetch-depth: 0
          persist-credentials: false

      - name: Set up Go
        uses: actions/setup-go@v6
        with:
{%- if .FromSource%}
          go-version-file: go.mod
{%- else%}
          go-version: "{%.GoVersion%}"
          cache: false
{%- end%}

{%if .FromSource%}      - name: Build saga-lsp from the checked-out commit
        id: saga-lsp
        run: |
          mkdir -p "$RUNNER_TEMP/saga-lsp"
          CGO_ENABLED=0 go build -o "$RUNNER_TEMP/saga-lsp/saga-lsp" ./cmd/saga-lsp
          CGO_ENABLED=0 go build -o "$RUNNER_TEMP/saga-lsp/saga-lsp-hook" ./cmd/saga-lsp-hook
          echo "$RUNNER_TEMP/saga-lsp" >> "$GITHUB_PATH"
{%- else%}      - name: Install saga-lsp {%.Version%}
        id: saga-lsp
        run: |
          CGO_ENABLED=0 go install -ldflags "-X {%.Module%}/cli.Version={%.Version%}" {%.Module%}/cmd/saga-lsp@{%.Version%} {%.Module%}/cmd/saga-lsp-hook@{%.Version%}
          echo "$(go env GOPATH)/bin" >> "$GITHUB_PATH"
{%- end%}

      - name: Install Claude Code {%.ClaudeVersion%}
        id: claude-code
        run: npm install -g {%.ClaudeCode%}@{%.ClaudeVersion%}

      # bubblewrap confines the agent's Bash and the tasks' checks. GitHub's
      # Ubuntu 24.04 images forbid unprivileged user namespaces (AppArmor),
      # which it needs: allow them, or stop here saying why.
      - name: Make confinement work
        id: confinement
        run: |
          sudo apt-get update -q
          sudo apt-get install -y -q bubblewrap socat
          if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
            sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0
          fi
          if ! bwrap --unshare-all --die-with-parent --ro-bind / / true; then
            echo "::error title=saga-lsp: no confinement::bubblewrap cannot create a user namespace on this runner, so neither the agent's Bash nor the tasks' checks could be confined; the story was not run"
            exit 1
          fi

      # GH_TOKEN and the credential helper are for the worker's gh and git
      # push: the worker leaves them out of the agent's environment.
      - name: Run the story
        id: {%.Worker%}
        env:
          STORY: ${{ inputs.{%index .Inputs 0%} }}
          BASE: ${{ inputs.{%index .Inputs 1%} }}
          REVIEW: ${{ inputs.{%index .Inputs 3%} }}
          SAGA_SESSION_DIR: ${{ runner.temp }}/saga-sessions
          {%.APIKey%}: ${{ secrets.{%.APIKey%} }}
          {%.OAuthToken%}: ${{ secrets.{%.OAuthToken%} }}
          GH_TOKEN: ${{ github.token }}
          GIT_CONFIG_COUNT: "1"
          GIT_CONFIG_KEY_0: credential.https://github.com.helper
          GIT_CONFIG_VALUE_0: "!gh auth git-credential"
        run: |
          [ -n "${%.APIKey%}" ] || unset {%.APIKey%}
          [ -n "${%.OAuthToken%}" ] || unset {%.OAuthToken%}
          session="{%.SessionPrefix%}$STORY-$(date +%s%3N)"
          round=()
          if [ "$REVIEW" = "true" ]; then round=(--review); fi
          saga-lsp worker "$STORY" --base "$BASE" "${round[@]}" --session "$session" --output-file "{%.OutputFile%}"

      - name: Summarise the run
        id: summary
        if: always() && steps.inputs.outcome == 'success'
        env:
          STORY: ${{ inputs.{%index .Inputs 0%} }}
          SAGA_SESSION_DIR: ${{ runner.temp }}/saga-sessions
          RUN_DIR: ${{ runner.temp }}/saga-run
        run: |
          mkdir -p "$RUN_DIR"
          if [ -d "$SAGA_SESSION_DIR" ]; then
            cp -R "$SAGA_SESSION_DIR/." "$RUN_DIR/"
          fi
          if common=$(git rev-parse --git-common-dir 2>/dev/null) && [ -f "$common/saga-lsp/runs/$STORY.json" ]; then
            cp "$common/saga-lsp/runs/$STORY.json" "$RUN_DIR/record.json"
          fi
          {
            echo "### saga-lsp: story \` + "`" + `$STORY\` + "`" + `"
            echo
            if command -v saga-lsp >/dev/null && [ -d .saga ]; then
              echo '` + "```" + `'
              saga-lsp status "$STORY" || true
              echo '` + "```" + `'
            else
              echo "The story did not start: see the failed step above."
            fi
          } >> "$GITHUB_STEP_SUMMARY"

      - name: Upload the run record and events
        if: always() && steps.summary.outcome == 'success'
        uses: actions/upload-artifact@v6
        with:
          name: {%.ArtifactPrefix%}${{ inputs.{%index .Inputs 2%} }}
          path: ${{ runner.temp }}/saga-run
          if-no-files-found: ignore
          retention-days: 30
`
