package main

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rhysd/actionlint"
	"golang.org/x/sys/unix"
)

// `gh __job <id>`: a run's one job, executed here as a GitHub-hosted
// runner would — queued (held while $GH_STANDIN_HOLD exists), pending
// while another run of its concurrency group is in progress (a newer
// pending run cancels an older one), in progress step by step, completed
// with a conclusion — its state written to the state file as it goes.
//
// Steps: actions/checkout clones origin into the job's workspace and checks
// out the dispatched commit; actions/setup-go and actions/setup-node are
// taken as done; actions/upload-artifact keeps the files for `gh run
// download`; any other action fails its step. run: steps run with bash
// -eo pipefail in the workspace, with the environment the job process had
// (the dispatcher's, minus GH_STANDIN_SECRET_* and GH_STANDIN_HOLD), the
// runner's GITHUB_* and RUNNER_* variables and the step's env: — except
// the steps whose id is in $GH_STANDIN_PROVIDED (default
// "saga-lsp,claude-code,confinement": installing software on the runner),
// taken as done because the test's PATH provides what they install.
// Expressions: inputs.*, secrets.* ($GH_STANDIN_SECRET_<NAME>, "" when
// unset), github.token/repository/run_id/workspace/sha/ref, runner.temp/os,
// steps.<id>.outcome/conclusion; conditions are &&-joined terms of
// always(), success(), failure(), cancelled(), !cancelled() and ==/!=.
//
// A cancel (SIGTERM from `gh run cancel`) or timeout-minutes (minutes of
// $GH_STANDIN_MINUTE, default 1m) interrupts the running step as the
// runner does — SIGINT to its process group, SIGTERM after
// $GH_STANDIN_CANCEL_GRACE (default 7.5s), SIGKILL 2.5 s later — then
// runs only the steps whose condition holds when cancelled (always()); the
// run concludes "cancelled" either way, as GitHub reports a timeout.

func (g *gh) job(args []string) error {
	if len(args) != 1 {
		return fail(1, "usage: gh __job <run-id>")
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		return fail(1, "gh __job: bad run id %q", args[0])
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	var run wfRun
	if err := g.updateRun(id, func(r *wfRun) { run = *r }); err != nil {
		return err
	}
	x := &jobExec{g: g, id: id, dir: run.Dir, stop: make(chan struct{}), outcomes: map[string]string{}}
	go func() {
		<-sig
		x.halt("")
	}()
	content, err := os.ReadFile(filepath.Join(run.Dir, "workflow.yml"))
	if err != nil {
		return err
	}
	wf, errs := actionlint.Parse(content)
	if len(errs) > 0 || len(wf.Jobs) != 1 {
		return x.startupFailure("the stand-in runs workflows of exactly one job")
	}
	var job *actionlint.Job
	for _, j := range wf.Jobs {
		job = j
	}
	x.ctx = &exprContext{inputs: run.Inputs, secret: func(k string) string { return g.getenv("GH_STANDIN_SECRET_" + k) },
		github: map[string]string{"token": fmt.Sprintf("ghs_standin_%d", id), "repository": run.Repo, "run_id": strconv.FormatInt(id, 10),
			"workspace": filepath.Join(run.Dir, "workspace"), "sha": run.HeadSha, "ref": "refs/heads/" + run.HeadBranch},
		runner: map[string]string{"temp": filepath.Join(run.Dir, "temp"), "os": "Linux"}, steps: x.outcomes}
	if !x.queued() {
		return nil
	}
	if run.Group != "" {
		unlock, ok := x.concurrency(run.Group)
		if !ok {
			return nil
		}
		defer unlock()
	}
	name := job.ID.Value
	if job.Name != nil {
		if name, err = x.ctx.interpolate(job.Name.Value); err != nil {
			return x.startupFailure(err.Error())
		}
	}
	started := false
	err = g.updateRun(id, func(r *wfRun) {
		if r.Status == statusCompleted {
			return
		}
		started = true
		t := now()
		r.Status, r.StartedAt, r.UpdatedAt = statusInProgress, t, t
		j := &wfJob{ID: id*10 + 1, Name: name, Status: statusInProgress, StartedAt: t,
			Steps: []*wfStep{{Name: "Set up job", Status: statusCompleted, Conclusion: conclusionSuccess, Number: 1}}}
		for i, s := range job.Steps {
			j.Steps = append(j.Steps, &wfStep{Name: stepName(s), Status: statusQueued, Number: i + 2})
		}
		j.Steps = append(j.Steps, &wfStep{Name: "Complete job", Status: statusQueued, Number: len(job.Steps) + 2})
		r.Jobs = []*wfJob{j}
	})
	if err != nil || !started {
		return err
	}
	minutes := 360.0
	if job.TimeoutMinutes != nil && job.TimeoutMinutes.Value > 0 {
		minutes = job.TimeoutMinutes.Value
	}
	timer := time.AfterFunc(time.Duration(minutes*float64(duration(g.getenv("GH_STANDIN_MINUTE"), time.Minute))), func() { x.halt("timeout") })
	defer timer.Stop()
	x.prepare()
	for i, s := range job.Steps {
		x.step(i+2, s)
	}
	conclusion := conclusionSuccess
	switch {
	case x.halted():
		conclusion = conclusionCancelled
	case x.failed:
		conclusion = conclusionFailure
	}
	return g.updateRun(id, func(r *wfRun) {
		t := now()
		j := r.Jobs[0]
		last := j.Steps[len(j.Steps)-1]
		last.Status, last.Conclusion = statusCompleted, conclusionSuccess
		j.Status, j.Conclusion, j.CompletedAt = statusCompleted, conclusion, t
		r.Status, r.Conclusion, r.UpdatedAt = statusCompleted, conclusion, t
	})
}

// jobExec is one job's execution.
type jobExec struct {
	g        *gh
	id       int64
	dir      string
	ctx      *exprContext
	env      []string          // the steps' base environment
	path     []string          // GITHUB_PATH additions, newest first
	extra    map[string]string // GITHUB_ENV additions
	outcomes map[string]string // step id → outcome
	failed   bool

	once sync.Once
	stop chan struct{} // closed on cancel or timeout
}

// halt stops the job: why is "timeout", or "" for a cancel whose reason
// the canceller recorded.
func (x *jobExec) halt(why string) {
	x.once.Do(func() {
		if why != "" {
			x.g.updateRun(x.id, func(r *wfRun) { r.cancel(why) })
		}
		close(x.stop)
	})
}

func (x *jobExec) halted() bool {
	select {
	case <-x.stop:
		return true
	default:
		return false
	}
}

// startupFailure ends a run whose job could not start.
func (x *jobExec) startupFailure(why string) error {
	fmt.Fprintf(os.Stderr, "gh stand-in: %s\n", why)
	return x.g.updateRun(x.id, func(r *wfRun) {
		r.Status, r.Conclusion, r.UpdatedAt = statusCompleted, "startup_failure", now()
	})
}

// queued waits while $GH_STANDIN_HOLD exists; false when the run was
// cancelled meanwhile.
func (x *jobExec) queued() bool {
	hold := x.g.getenv("GH_STANDIN_HOLD")
	for hold != "" {
		if _, err := os.Stat(hold); err != nil {
			break
		}
		select {
		case <-x.stop:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return !x.halted()
}

// concurrency takes the group's lock, pending (and superseding an older
// pending run of the group) while another run holds it.
func (x *jobExec) concurrency(group string) (unlock func(), ok bool) {
	dir := x.g.statePath() + ".groups"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		x.startupFailure(err.Error())
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%08x.lock", crc32.ChecksumIEEE([]byte(group)))), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		x.startupFailure(err.Error())
		return nil, false
	}
	pending := false
	for unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		if !pending {
			pending = true
			var superseded []int
			x.g.withState(func(st *state) (bool, error) {
				for _, r := range st.Runs {
					switch {
					case r.ID == x.id && r.Status == statusQueued:
						r.Status, r.UpdatedAt = statusPending, now()
					case r.ID != x.id && r.Group == group && r.Status == statusPending:
						superseded = append(superseded, r.cancel("superseded"))
					}
				}
				return true, nil
			})
			for _, pid := range superseded {
				if pid > 0 {
					syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		select {
		case <-x.stop:
			f.Close()
			return nil, false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return func() { f.Close() }, true
}

// prepare makes the job's folders and the steps' base environment.
func (x *jobExec) prepare() {
	for _, d := range []string{"workspace", "temp", "artifacts"} {
		os.MkdirAll(filepath.Join(x.dir, d), 0o755)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GH_STANDIN_SECRET_") || k == "GH_STANDIN_HOLD" {
			continue
		}
		x.env = append(x.env, kv)
	}
	gh := x.ctx.github
	x.env = append(x.env, "CI=true", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=workflow_dispatch",
		"GITHUB_WORKSPACE="+gh["workspace"], "GITHUB_REPOSITORY="+gh["repository"], "GITHUB_RUN_ID="+gh["run_id"],
		"GITHUB_SHA="+gh["sha"], "GITHUB_REF="+gh["ref"], "RUNNER_TEMP="+x.ctx.runner["temp"], "RUNNER_OS=Linux")
	x.extra = map[string]string{}
}

func stepName(s *actionlint.Step) string {
	if s.Name != nil {
		return s.Name.Value
	}
	switch e := s.Exec.(type) {
	case *actionlint.ExecRun:
		first, _, _ := strings.Cut(strings.TrimSpace(e.Run.Value), "\n")
		return "Run " + first
	case *actionlint.ExecAction:
		return "Run " + e.Uses.Value
	}
	return "step"
}

// step runs step number n, if its condition holds, and records it.
func (x *jobExec) step(n int, s *actionlint.Step) {
	cond := "success()"
	if s.If != nil {
		cond = s.If.Value
	}
	// Whether the job was cancelled is read once: a step whose condition
	// held before the cancel is interrupted by it, one that ran because of
	// always() after it is not, however late its script starts.
	cancelled := x.halted()
	run, err := x.ctx.condition(cond, x.failed, cancelled)
	conclusion := conclusionSkipped
	if err != nil {
		fmt.Fprintf(os.Stderr, "gh stand-in: step %d: %v\n", n, err)
		run, conclusion = false, conclusionFailure
		x.failed = true
	}
	if run {
		x.setStep(n, statusInProgress, "")
		conclusion = x.exec(s, !cancelled)
		if conclusion == conclusionFailure {
			x.failed = true
		}
	}
	if s.ID != nil {
		x.outcomes[s.ID.Value] = conclusion
	}
	x.setStep(n, statusCompleted, conclusion)
}

func (x *jobExec) setStep(n int, status, conclusion string) {
	x.g.updateRun(x.id, func(r *wfRun) {
		for _, st := range r.Jobs[0].Steps {
			if st.Number == n {
				st.Status, st.Conclusion = status, conclusion
			}
		}
		r.UpdatedAt = now()
	})
}

// exec runs a step whose condition held and returns its conclusion; a
// cancel stops it when interruptible.
func (x *jobExec) exec(s *actionlint.Step, interruptible bool) string {
	env := map[string]string{}
	if s.Env != nil {
		for _, v := range s.Env.Vars {
			val, err := x.ctx.interpolate(v.Value.Value)
			if err != nil {
				fmt.Fprintf(os.Stderr, "gh stand-in: env %s: %v\n", v.Name.Value, err)
				return conclusionFailure
			}
			env[v.Name.Value] = val
		}
	}
	switch e := s.Exec.(type) {
	case *actionlint.ExecAction:
		return x.action(e)
	case *actionlint.ExecRun:
		if s.ID != nil && slices.Contains(provided(x.g.getenv("GH_STANDIN_PROVIDED")), s.ID.Value) {
			fmt.Fprintf(os.Stderr, "gh stand-in: step %s taken as done: the test's PATH provides what it installs\n", s.ID.Value)
			return conclusionSuccess
		}
		if e.Shell != nil && e.Shell.Value != "bash" {
			fmt.Fprintf(os.Stderr, "gh stand-in: shell %s is not simulated\n", e.Shell.Value)
			return conclusionFailure
		}
		dir := x.ctx.github["workspace"]
		if e.WorkingDirectory != nil {
			dir = filepath.Join(dir, e.WorkingDirectory.Value)
		}
		return x.script(e.Run.Value, dir, env, interruptible)
	}
	return conclusionFailure
}

func provided(v string) []string {
	if v == "" {
		return []string{"saga-lsp", "claude-code", "confinement"}
	}
	return strings.Split(v, ",")
}

// action runs a uses: step.
func (x *jobExec) action(e *actionlint.ExecAction) string {
	uses, _, _ := strings.Cut(e.Uses.Value, "@")
	with := map[string]string{}
	for k, in := range e.Inputs {
		v, err := x.ctx.interpolate(in.Value.Value)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gh stand-in: %s with %s: %v\n", uses, k, err)
			return conclusionFailure
		}
		with[k] = v
	}
	switch uses {
	case "actions/checkout":
		ws := x.ctx.github["workspace"]
		var run wfRun
		x.g.updateRun(x.id, func(r *wfRun) { run = *r })
		for _, args := range [][]string{{"clone", "-q", run.Origin, ws}, {"-C", ws, "checkout", "-q", "-B", run.HeadBranch, run.HeadSha}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "gh stand-in: checkout: git %v: %v\n%s", args, err, out)
				return conclusionFailure
			}
		}
		return conclusionSuccess
	case "actions/setup-go", "actions/setup-node":
		return conclusionSuccess
	case "actions/upload-artifact":
		return x.upload(with)
	}
	fmt.Fprintf(os.Stderr, "gh stand-in: action %s is not simulated\n", e.Uses.Value)
	return conclusionFailure
}

// upload keeps with["path"] (a file or a folder's contents) as the
// artifact with["name"].
func (x *jobExec) upload(with map[string]string) string {
	name := with["name"]
	if name == "" {
		name = "artifact"
	}
	from := with["path"]
	if !filepath.IsAbs(from) {
		from = filepath.Join(x.ctx.github["workspace"], from)
	}
	files := 0
	filepath.WalkDir(from, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return nil
	})
	if files == 0 {
		switch with["if-no-files-found"] {
		case "error":
			fmt.Fprintf(os.Stderr, "No files were found with the provided path: %s. No artifacts will be uploaded.\n", with["path"])
			return conclusionFailure
		case "ignore":
		default:
			fmt.Fprintf(os.Stderr, "Warning: No files were found with the provided path: %s. No artifacts will be uploaded.\n", with["path"])
		}
		return conclusionSuccess
	}
	to := filepath.Join(x.dir, "artifacts", name)
	if _, err := os.Stat(to); err == nil && with["overwrite"] != "true" {
		fmt.Fprintf(os.Stderr, "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run\n")
		return conclusionFailure
	}
	os.RemoveAll(to)
	src := from
	if fi, err := os.Stat(from); err == nil && !fi.IsDir() {
		src = filepath.Dir(from)
	}
	if err := copyTree(src, to); err != nil {
		fmt.Fprintf(os.Stderr, "gh stand-in: upload %s: %v\n", name, err)
		return conclusionFailure
	}
	x.g.updateRun(x.id, func(r *wfRun) {
		if !slices.Contains(r.Artifacts, name) {
			r.Artifacts = append(r.Artifacts, name)
		}
	})
	return conclusionSuccess
}

// script runs a run: step's script with bash, as the runner does, stopping
// it when interruptible and the job is cancelled or times out.
func (x *jobExec) script(body, dir string, stepEnv map[string]string, interruptible bool) string {
	tmp := x.ctx.runner["temp"]
	f, err := os.CreateTemp(tmp, "step-*.sh")
	if err != nil {
		return conclusionFailure
	}
	f.WriteString(body)
	f.Close()
	files := map[string]string{}
	for _, k := range []string{"GITHUB_PATH", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
		files[k] = f.Name() + "." + strings.ToLower(strings.TrimPrefix(k, "GITHUB_"))
		os.WriteFile(files[k], nil, 0o644)
	}
	env := slices.Clone(x.env)
	for k, v := range files {
		env = append(env, k+"="+v)
	}
	for k, v := range x.extra {
		env = append(env, k+"="+v)
	}
	for k, v := range stepEnv {
		env = append(env, k+"="+v)
	}
	if len(x.path) > 0 {
		env = append(env, "PATH="+strings.Join(x.path, ":")+":"+getenvIn(env, "PATH"))
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", f.Name())
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "gh stand-in: %v\n", err)
		return conclusionFailure
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var stop <-chan struct{}
	if interruptible {
		stop = x.stop // already closed when the cancel came between the condition and here
	}
	var werr error
	select {
	case werr = <-done:
	case <-stop:
		grace := duration(x.g.getenv("GH_STANDIN_CANCEL_GRACE"), 7500*time.Millisecond)
		pgid := -cmd.Process.Pid
		for _, s := range []struct {
			sig  syscall.Signal
			wait time.Duration
		}{{syscall.SIGINT, grace}, {syscall.SIGTERM, 2500 * time.Millisecond}, {syscall.SIGKILL, time.Hour}} {
			syscall.Kill(pgid, s.sig)
			select {
			case <-done:
				return conclusionCancelled
			case <-time.After(s.wait):
			}
		}
	}
	x.collect(files)
	if werr != nil {
		return conclusionFailure
	}
	return conclusionSuccess
}

// collect applies what a step wrote to GITHUB_PATH, GITHUB_ENV and
// GITHUB_STEP_SUMMARY.
func (x *jobExec) collect(files map[string]string) {
	if data, err := os.ReadFile(files["GITHUB_PATH"]); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				x.path = append([]string{line}, x.path...)
			}
		}
	}
	if data, err := os.ReadFile(files["GITHUB_ENV"]); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				x.extra[k] = v
			}
		}
	}
	if src, err := os.Open(files["GITHUB_STEP_SUMMARY"]); err == nil {
		defer src.Close()
		if dst, err := os.OpenFile(filepath.Join(x.dir, "summary.md"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			io.Copy(dst, bufio.NewReader(src))
			dst.Close()
		}
	}
}

func getenvIn(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

func duration(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d
	}
	return def
}

// ---- expressions ----

// exprContext evaluates the few expressions the stand-in understands.
type exprContext struct {
	inputs map[string]string
	secret func(string) string
	github map[string]string
	runner map[string]string
	steps  map[string]string // step id → outcome
}

var errUnsupported = errors.New("not simulated by the gh stand-in")

// interpolate replaces every ${{ expr }} in s by its value.
func (c *exprContext) interpolate(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unterminated expression in %q", s)
		}
		v, err := c.value(strings.TrimSpace(s[i+3 : i+j]))
		if err != nil {
			return "", err
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+j+2:]
	}
}

// value is a context property or a 'literal'.
func (c *exprContext) value(e string) (string, error) {
	if len(e) >= 2 && e[0] == '\'' && e[len(e)-1] == '\'' {
		return strings.ReplaceAll(e[1:len(e)-1], "''", "'"), nil
	}
	ctx, rest, _ := strings.Cut(e, ".")
	var m map[string]string
	switch ctx {
	case "inputs":
		m = c.inputs
	case "secrets":
		if c.secret != nil {
			return c.secret(rest), nil
		}
	case "github":
		m = c.github
	case "runner":
		m = c.runner
	case "steps":
		if id, prop, ok := strings.Cut(rest, "."); ok && (prop == "outcome" || prop == "conclusion") && c.steps != nil {
			return c.steps[id], nil
		}
	}
	if m != nil {
		if v, ok := m[rest]; ok {
			return v, nil
		}
		if ctx == "inputs" {
			return "", nil
		}
	}
	return "", fmt.Errorf("${{ %s }}: %w", e, errUnsupported)
}

// condition evaluates an if: — success() implied when it names no status
// function.
func (c *exprContext) condition(e string, failed, cancelled bool) (bool, error) {
	e = strings.TrimSpace(e)
	if inner, ok := strings.CutPrefix(e, "${{"); ok {
		e = strings.TrimSpace(strings.TrimSuffix(inner, "}}"))
	}
	if strings.Contains(e, "||") {
		return false, fmt.Errorf("if: %s: || is %w", e, errUnsupported)
	}
	status := false
	result := true
	for term := range strings.SplitSeq(e, "&&") {
		term = strings.TrimSpace(term)
		var v bool
		switch term {
		case "always()":
			v, status = true, true
		case "success()":
			v, status = !failed && !cancelled, true
		case "failure()":
			v, status = failed, true
		case "cancelled()":
			v, status = cancelled, true
		case "!cancelled()":
			v, status = !cancelled, true
		default:
			op := "=="
			l, r, ok := strings.Cut(term, "==")
			if !ok {
				op = "!="
				if l, r, ok = strings.Cut(term, "!="); !ok {
					return false, fmt.Errorf("if: %s: %w", term, errUnsupported)
				}
			}
			a, err := c.value(strings.TrimSpace(l))
			if err != nil {
				return false, err
			}
			b, err := c.value(strings.TrimSpace(r))
			if err != nil {
				return false, err
			}
			v = (a == b) == (op == "==")
		}
		result = result && v
	}
	if !status {
		result = result && !failed && !cancelled
	}
	return result, nil
}
