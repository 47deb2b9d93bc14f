package main

import (
	"cmp"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rhysd/actionlint"
)

// GitHub Actions: workflow runs dispatched, listed, viewed, cancelled and
// their artifacts downloaded, as gh does, with the runs in the state file
// and each run's job executed locally by a detached `gh __job <id>`
// (job.go). The workflow is read from origin's branch (the default one, or
// --ref) as GitHub reads it: what is pushed, not the working tree.

// Run statuses and conclusions, as GitHub names them.
const (
	statusQueued     = "queued"
	statusPending    = "pending" // waiting for its concurrency group
	statusInProgress = "in_progress"
	statusCompleted  = "completed"

	conclusionSuccess   = "success"
	conclusionFailure   = "failure"
	conclusionCancelled = "cancelled" // gh run cancel, a newer pending run of the group, or timeout-minutes
	conclusionSkipped   = "skipped"
)

// wfRun is one workflow run; its JSON names are the stand-in's (the
// state file), its export the real gh's (export).
type wfRun struct {
	ID           int64             `json:"databaseId"`
	Number       int64             `json:"number"`
	Repo         string            `json:"repo"`
	Workflow     string            `json:"workflow"` // the file's name
	Event        string            `json:"event"`    // what started it ("": workflow_dispatch, as before this field)
	WorkflowID   int64             `json:"workflowDatabaseId"`
	WorkflowName string            `json:"workflowName"`
	DisplayTitle string            `json:"displayTitle"`
	HeadBranch   string            `json:"headBranch"`
	HeadSha      string            `json:"headSha"`
	Status       string            `json:"status"`
	Conclusion   string            `json:"conclusion"`
	CreatedAt    time.Time         `json:"createdAt"`
	StartedAt    time.Time         `json:"startedAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	DispatchedAt time.Time         `json:"dispatchedAt"` // to the nanosecond, for GH_STANDIN_LIST_DELAY
	Inputs       map[string]string `json:"inputs"`
	Group        string            `json:"group,omitempty"`  // its concurrency group
	PID          int               `json:"pid,omitempty"`    // its job process
	Cancel       string            `json:"cancel,omitempty"` // why it is being cancelled: "cancel", "superseded", "timeout"
	Origin       string            `json:"origin"`           // the repository cloned
	Dir          string            `json:"dir"`              // the job's files: workflow.yml, job.log, workspace/, temp/, artifacts/
	Jobs         []*wfJob          `json:"jobs,omitempty"`
	Artifacts    []string          `json:"artifacts,omitempty"`
}

type wfJob struct {
	ID          int64     `json:"databaseId"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	Conclusion  string    `json:"conclusion"`
	StartedAt   time.Time `json:"startedAt"`
	CompletedAt time.Time `json:"completedAt"`
	Steps       []*wfStep `json:"steps"`
}

type wfStep struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	Number     int    `json:"number"`
}

func (r *wfRun) url() string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", r.Repo, r.ID)
}

// runFields are `gh run list --json`'s, runViewFields `gh run view
// --json`'s (gh 2.23 and later alike).
var (
	runFields = []string{"conclusion", "createdAt", "databaseId", "displayTitle", "event", "headBranch", "headSha",
		"name", "number", "startedAt", "status", "updatedAt", "url", "workflowDatabaseId", "workflowName"}
	runViewFields = append(slices.Clone(runFields[:7]), append([]string{"jobs"}, runFields[7:]...)...)
)

// export is the run as gh's exporter prints it: times as time.Time marshals
// them, "" for a conclusion not reached, and — as gh does — no "jobs" key
// when the run has no job yet.
func (r *wfRun) export(fields []string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		switch f {
		case "conclusion":
			out[f] = r.Conclusion
		case "createdAt":
			out[f] = r.CreatedAt
		case "databaseId":
			out[f] = r.ID
		case "displayTitle":
			out[f] = r.DisplayTitle
		case "event":
			out[f] = r.event()
		case "headBranch":
			out[f] = r.HeadBranch
		case "headSha":
			out[f] = r.HeadSha
		case "name", "workflowName":
			out[f] = r.WorkflowName
		case "number":
			out[f] = r.Number
		case "startedAt":
			out[f] = r.StartedAt
		case "status":
			out[f] = r.Status
		case "updatedAt":
			out[f] = r.UpdatedAt
		case "url":
			out[f] = r.url()
		case "workflowDatabaseId":
			out[f] = r.WorkflowID
		case "jobs":
			var jobs []any
			for _, j := range r.Jobs {
				steps := []any{}
				for _, s := range j.Steps {
					steps = append(steps, map[string]any{"name": s.Name, "status": s.Status, "conclusion": s.Conclusion, "number": s.Number})
				}
				var completed *time.Time
				if !j.CompletedAt.IsZero() {
					completed = &j.CompletedAt
				}
				jobs = append(jobs, map[string]any{"databaseId": j.ID, "status": j.Status, "conclusion": j.Conclusion, "name": j.Name,
					"steps": steps, "startedAt": j.StartedAt, "completedAt": completed, "url": fmt.Sprintf("%s/job/%d", r.url(), j.ID)})
			}
			if jobs != nil {
				out[f] = jobs
			}
		}
	}
	return out
}

func (r *wfRun) event() string {
	if r.Event == "" {
		return eventDispatch
	}
	return r.Event
}

const eventDispatch = "workflow_dispatch"

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// ---- gh workflow run ----

func (g *gh) workflowRun(args []string) error {
	f, err := parseFlags("workflow run", args,
		flagSpec{long: "raw-field", short: "f", value: true}, flagSpec{long: "field", short: "F", value: true},
		flagSpec{long: "ref", short: "r", value: true}, flagSpec{long: "json"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if f.set["json"] {
		return fail(1, "gh stand-in: --json input is not simulated")
	}
	if len(f.positional) != 1 {
		return fail(1, "workflow ID, name, or filename required when not running interactively")
	}
	file := f.positional[0]
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	origin, err := g.originDir()
	if err != nil {
		return err
	}
	ref := f.vals["ref"]
	if ref == "" {
		ref = g.defaultBranch()
	}
	content, err := originGit(origin, "show", "refs/heads/"+ref+":.github/workflows/"+file)
	if err != nil {
		return fail(1, "could not find any workflows named %s", file)
	}
	sha, err := originGit(origin, "rev-parse", "refs/heads/"+ref)
	if err != nil {
		return fail(1, "could not create workflow dispatch event: HTTP 422: No ref found for: %s", ref)
	}
	api := fmt.Sprintf("(https://api.github.com/repos/%s/actions/workflows/%d/dispatches)", repo, workflowID(file))
	wf, errs := actionlint.Parse([]byte(content))
	if len(errs) > 0 {
		return fail(1, "could not create workflow dispatch event: HTTP 422: Invalid workflow file: %s %s", errs[0].Message, api)
	}
	var dispatch *actionlint.WorkflowDispatchEvent
	for _, e := range wf.On {
		if d, ok := e.(*actionlint.WorkflowDispatchEvent); ok {
			dispatch = d
		}
	}
	if dispatch == nil {
		return fail(1, "could not create workflow dispatch event: HTTP 422: Workflow does not have 'workflow_dispatch' trigger %s", api)
	}
	inputs, err := dispatchInputs(f, dispatch, api)
	if err != nil {
		return err
	}
	run, err := g.startRun(repo, origin, file, ref, eventDispatch, content, wf, inputs, sha, api)
	if err != nil {
		return err
	}
	if g.getenv("GH_STANDIN_DISPATCH_DETAILS") == "1" {
		fmt.Fprintln(g.stdout, run.url())
	}
	return nil
}

// event is `gh __event <event> <file> [--ref B]`: GitHub receiving an
// event (pull_request, push, …) that starts the workflow file as origin's
// branch B (default: the default branch) holds it — a pull request's
// version of a workflow runs as its branch has it. No inputs.
func (g *gh) event(args []string) error {
	f, err := parseFlags("__event", args, flagSpec{long: "ref", value: true})
	if err != nil {
		return err
	}
	if len(f.positional) != 2 {
		return fail(1, "gh stand-in: __event <event> <file> [--ref B]")
	}
	event, file := f.positional[0], f.positional[1]
	repo, err := g.repo(f)
	if err != nil {
		return err
	}
	origin, err := g.originDir()
	if err != nil {
		return err
	}
	ref := cmp.Or(f.vals["ref"], g.defaultBranch())
	content, err := originGit(origin, "show", "refs/heads/"+ref+":.github/workflows/"+file)
	if err != nil {
		return fail(1, "gh stand-in: no %s on origin's %s", file, ref)
	}
	sha, _ := originGit(origin, "rev-parse", "refs/heads/"+ref)
	wf, errs := actionlint.Parse([]byte(content))
	if len(errs) > 0 {
		return fail(1, "gh stand-in: invalid workflow: %s", errs[0].Message)
	}
	on := false
	for _, e := range wf.On {
		if w, ok := e.(*actionlint.WebhookEvent); ok && w.Hook != nil && w.Hook.Value == event {
			on = true
		}
	}
	if !on {
		return fail(1, "gh stand-in: %s on %s has no %s trigger", file, ref, event)
	}
	run, err := g.startRun(repo, origin, file, ref, event, content, wf, map[string]string{}, sha, "")
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, run.url())
	return nil
}

// startRun records a queued run of the workflow and starts its job.
func (g *gh) startRun(repo, origin, file, ref, event, content string, wf *actionlint.Workflow, inputs map[string]string, sha, api string) (*wfRun, error) {
	var err error
	ctx := &exprContext{inputs: inputs}
	title := ""
	if wf.Name != nil {
		title = wf.Name.Value
	}
	if wf.RunName != nil {
		if title, err = ctx.interpolate(wf.RunName.Value); err != nil {
			return nil, fail(1, "could not create workflow dispatch event: HTTP 422: %v %s", err, api)
		}
	}
	group := ""
	if wf.Concurrency != nil && wf.Concurrency.Group != nil {
		if group, err = ctx.interpolate(wf.Concurrency.Group.Value); err != nil {
			return nil, fail(1, "could not create workflow dispatch event: HTTP 422: %v %s", err, api)
		}
	}
	var run *wfRun
	err = g.withState(func(st *state) (bool, error) {
		run = &wfRun{ID: int64(4_000_000_000 + len(st.Runs) + 1), Repo: repo, Workflow: file, Event: event, WorkflowID: workflowID(file),
			WorkflowName: title0(wf), DisplayTitle: title, HeadBranch: ref, HeadSha: strings.TrimSpace(sha),
			Status: statusQueued, Inputs: inputs, Group: group, Origin: origin}
		for _, r := range st.Runs {
			if r.Repo == repo && r.Workflow == file {
				run.Number++
			}
		}
		run.Number++
		run.CreatedAt, run.DispatchedAt = now(), time.Now()
		run.StartedAt, run.UpdatedAt = run.CreatedAt, run.CreatedAt
		run.Dir = g.statePath() + ".actions/" + strconv.FormatInt(run.ID, 10)
		if err := os.MkdirAll(run.Dir, 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(filepath.Join(run.Dir, "workflow.yml"), []byte(content), 0o644); err != nil {
			return false, err
		}
		st.Runs = append(st.Runs, run)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	pid, err := g.startJob(run)
	if err != nil {
		return nil, err
	}
	if err := g.updateRun(run.ID, func(r *wfRun) { r.PID = pid }); err != nil {
		return nil, err
	}
	return run, nil
}

// title0 is the workflow's name ("" when it has none).
func title0(wf *actionlint.Workflow) string {
	if wf.Name == nil {
		return ""
	}
	return wf.Name.Value
}

// dispatchInputs are -f/-F key=value checked against the workflow's
// inputs as GitHub checks them, defaults filled in.
func dispatchInputs(f *flags, d *actionlint.WorkflowDispatchEvent, api string) (map[string]string, error) {
	inputs := map[string]string{}
	for _, kv := range append(slices.Clone(f.all["raw-field"]), f.all["field"]...) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fail(1, "field %q requires a value separated by an '=' sign", kv)
		}
		inputs[k] = v
	}
	var unexpected []string
	for k := range inputs {
		if d.Inputs[strings.ToLower(k)] == nil {
			unexpected = append(unexpected, strconv.Quote(k))
		}
	}
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		return nil, fail(1, "could not create workflow dispatch event: HTTP 422: Unexpected inputs provided: [%s] %s", strings.Join(unexpected, ", "), api)
	}
	names := make([]string, 0, len(d.Inputs))
	for k := range d.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		in := d.Inputs[k]
		name := in.Name.Value
		if _, ok := inputs[name]; ok {
			continue
		}
		if in.Required != nil && in.Required.Value {
			return nil, fail(1, "could not create workflow dispatch event: HTTP 422: Required input '%s' not provided %s", name, api)
		}
		if in.Default != nil {
			inputs[name] = in.Default.Value
		}
	}
	return inputs, nil
}

func workflowID(file string) int64 {
	return int64(crc32.ChecksumIEEE([]byte(file))%90_000_000) + 10_000_000
}

// originDir is the local repository the origin remote points at: the
// stand-in's GitHub.
func (g *gh) originDir() (string, error) {
	url, err := g.git("remote", "get-url", "origin")
	if err != nil {
		return "", fail(1, "no git remotes found")
	}
	dir := strings.TrimPrefix(strings.TrimSpace(url), "file://")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fail(1, "gh stand-in: origin %s is not a local repository: the stand-in runs workflows from a local origin only", strings.TrimSpace(url))
	}
	return dir, nil
}

func originGit(origin string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"--git-dir", origin}, args...)...).Output()
	return string(out), err
}

func (g *gh) statePath() string { return g.getenv("GH_STANDIN_STATE") }

// startJob starts the run's job process, detached: `gh __job <id>`, its
// output in the run's job.log.
func (g *gh) startJob(run *wfRun) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	log, err := os.OpenFile(filepath.Join(run.Dir, "job.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.Command(exe, "__job", strconv.FormatInt(run.ID, 10))
	cmd.Dir = run.Dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	return pid, nil
}

// updateRun changes run id under the state lock.
func (g *gh) updateRun(id int64, fn func(r *wfRun)) error {
	return g.withState(func(st *state) (bool, error) {
		for _, r := range st.Runs {
			if r.ID == id {
				fn(r)
				return true, nil
			}
		}
		return false, fmt.Errorf("gh stand-in: no run %d in the state file", id)
	})
}

// ---- gh run list / view / cancel / download ----

func (g *gh) runList(args []string) error {
	f, err := parseFlags("run list", args,
		flagSpec{long: "workflow", short: "w", value: true}, flagSpec{long: "branch", short: "b", value: true},
		flagSpec{long: "status", short: "s", value: true}, flagSpec{long: "event", short: "e", value: true},
		flagSpec{long: "user", short: "u", value: true}, flagSpec{long: "limit", short: "L", value: true},
		flagSpec{long: "json", value: true}, flagSpec{long: "jq", short: "q", value: true},
		flagSpec{long: "template", short: "t", value: true}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] {
		return fail(1, "gh stand-in: --jq/--template are not simulated")
	}
	if len(f.positional) > 0 {
		return fail(1, "unknown argument %q for \"gh run list\"", f.positional[0])
	}
	limit := 20
	if f.set["limit"] {
		if limit, err = strconv.Atoi(f.vals["limit"]); err != nil || limit < 1 {
			return fail(1, "invalid limit: %s", f.vals["limit"])
		}
	}
	var fields []string
	if f.set["json"] {
		if fields, err = fieldsOf(f.vals["json"], runFields); err != nil {
			return err
		}
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	// GitHub lists a dispatched run only some time after the dispatch.
	delay := duration(g.getenv("GH_STANDIN_LIST_DELAY"), 0)
	var found []*wfRun
	err = g.withState(func(st *state) (bool, error) {
		known := false
		for i := len(st.Runs) - 1; i >= 0; i-- {
			r := st.Runs[i]
			if r.Repo != repo || time.Since(r.DispatchedAt) < delay {
				continue
			}
			if w := f.vals["workflow"]; w != "" && w != r.Workflow && w != r.WorkflowName {
				continue
			}
			known = true
			if b := f.vals["branch"]; b != "" && b != r.HeadBranch {
				continue
			}
			if s := f.vals["status"]; s != "" && s != r.Status && s != r.Conclusion {
				continue
			}
			if e := f.vals["event"]; e != "" && e != r.event() {
				continue
			}
			if len(found) < limit {
				found = append(found, r)
			}
		}
		if w := f.vals["workflow"]; w != "" && !known && !g.workflowExists(repo, w) {
			return false, fail(1, "could not find any workflows named %s", w)
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if fields != nil {
		out := []any{}
		for _, r := range found {
			out = append(out, r.export(fields))
		}
		return g.writeJSON(out)
	}
	if len(found) == 0 {
		return fail(1, "no runs found")
	}
	for _, r := range found {
		fmt.Fprintf(g.stdout, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Status, r.Conclusion, r.DisplayTitle, r.WorkflowName,
			r.HeadBranch, r.event(), r.ID, r.duration(), r.StartedAt.Format(time.RFC3339))
	}
	return nil
}

// workflowExists tells whether the workflow file is on origin's default
// branch (a workflow with no runs yet).
func (g *gh) workflowExists(repo, file string) bool {
	origin, err := g.originDir()
	if err != nil {
		return false
	}
	_, err = originGit(origin, "cat-file", "-e", "refs/heads/"+g.defaultBranch()+":.github/workflows/"+file)
	return err == nil
}

func (r *wfRun) duration() time.Duration {
	end := r.UpdatedAt
	if r.Status != statusCompleted {
		end = now()
	}
	return end.Sub(r.StartedAt).Round(time.Second)
}

// runArg finds the run a <run-id> argument names.
func runArg(st *state, repo, arg string) (*wfRun, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return nil, fail(1, "invalid run-id %q", arg)
	}
	for _, r := range st.Runs {
		if r.ID == id && r.Repo == repo {
			return r, nil
		}
	}
	return nil, nil
}

func (g *gh) runView(args []string) error {
	f, err := parseFlags("run view", args,
		flagSpec{long: "json", value: true}, flagSpec{long: "jq", short: "q", value: true},
		flagSpec{long: "template", short: "t", value: true}, flagSpec{long: "exit-status"},
		flagSpec{long: "verbose", short: "v"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if f.set["jq"] || f.set["template"] {
		return fail(1, "gh stand-in: --jq/--template are not simulated")
	}
	if len(f.positional) != 1 {
		return fail(1, "run or job ID required when not running interactively")
	}
	var fields []string
	if f.set["json"] {
		if fields, err = fieldsOf(f.vals["json"], runViewFields); err != nil {
			return err
		}
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	var run wfRun
	err = g.withState(func(st *state) (bool, error) {
		r, err := runArg(st, repo, f.positional[0])
		if err != nil {
			return false, err
		}
		if r == nil {
			return false, fail(1, "failed to get run: HTTP 404: Not Found (https://api.github.com/repos/%s/actions/runs/%s?exclude_pull_requests=true)", repo, f.positional[0])
		}
		run = *r
		return false, nil
	})
	if err != nil {
		return err
	}
	if fields != nil {
		return g.writeJSON(run.export(fields))
	}
	fmt.Fprintf(g.stdout, "%s %s · %d\n", run.HeadBranch, run.WorkflowName, run.ID)
	fmt.Fprintf(g.stdout, "Triggered via %s about %s\n\n", run.event(), run.duration())
	for _, j := range run.Jobs {
		fmt.Fprintf(g.stdout, "JOBS\n%s %s (ID %d)\n", j.Status+"/"+j.Conclusion, j.Name, j.ID)
	}
	fmt.Fprintf(g.stdout, "\nFor more information about the job, try: gh run view --job=<job-id>\nView this run on GitHub: %s\n", run.url())
	if f.set["exit-status"] && run.Status == statusCompleted && run.Conclusion != conclusionSuccess {
		return fail(1, "")
	}
	return nil
}

func (g *gh) runCancel(args []string) error {
	f, err := parseFlags("run cancel", args, flagSpec{long: "force"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if len(f.positional) != 1 {
		return fail(1, "run ID required when not running interactively")
	}
	arg := f.positional[0]
	if _, err := strconv.Atoi(arg); err != nil {
		return fail(1, "invalid run-id %q", arg)
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	pid := 0
	err = g.withState(func(st *state) (bool, error) {
		r, err := runArg(st, repo, arg)
		if err != nil {
			return false, err
		}
		if r == nil {
			return false, fail(1, "Could not find any workflow run with ID %s", arg)
		}
		if r.Status == statusCompleted {
			return false, fail(1, "Cannot cancel a workflow run that is completed")
		}
		pid = r.cancel("cancel")
		return true, nil
	})
	if err != nil {
		return err
	}
	if pid > 0 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	verb := "cancel"
	if f.set["force"] {
		verb = "force cancel"
	}
	fmt.Fprintf(g.stdout, "✓ Request to %s workflow %s submitted.\n", verb, arg)
	return nil
}

// cancel marks the run as being cancelled (why), completing it at once
// when its job has not started; it returns the job process to signal.
func (r *wfRun) cancel(why string) int {
	if r.Cancel == "" {
		r.Cancel = why
	}
	if r.Status == statusQueued || r.Status == statusPending {
		r.Status, r.Conclusion, r.UpdatedAt = statusCompleted, conclusionCancelled, now()
	}
	return r.PID
}

func (g *gh) runDownload(args []string) error {
	f, err := parseFlags("run download", args,
		flagSpec{long: "dir", short: "D", value: true}, flagSpec{long: "name", short: "n", value: true},
		flagSpec{long: "pattern", short: "p", value: true}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	if len(f.positional) != 1 {
		return fail(1, "gh stand-in: download without a run ID is not simulated")
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	var run wfRun
	err = g.withState(func(st *state) (bool, error) {
		r, err := runArg(st, repo, f.positional[0])
		if err != nil {
			return false, err
		}
		if r == nil {
			return false, fail(1, "error fetching artifacts: HTTP 404: Not Found (https://api.github.com/repos/%s/actions/runs/%s/artifacts?per_page=100)", repo, f.positional[0])
		}
		run = *r
		return false, nil
	})
	if err != nil {
		return err
	}
	if len(run.Artifacts) == 0 {
		return fail(1, "no valid artifacts found to download")
	}
	dest := f.vals["dir"]
	if dest == "" {
		dest = "."
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(g.cwd, dest)
	}
	names, patterns := f.all["name"], f.all["pattern"]
	isolate := len(patterns) > 0 || len(names) != 1
	n := 0
	for _, a := range run.Artifacts {
		if len(names) > 0 || len(patterns) > 0 {
			match := slices.Contains(names, a)
			for _, p := range patterns {
				if ok, _ := filepath.Match(p, a); ok {
					match = true
				}
			}
			if !match {
				continue
			}
		}
		to := dest
		if isolate {
			to = filepath.Join(dest, a)
		}
		if err := copyTree(filepath.Join(run.Dir, "artifacts", a), to); err != nil {
			return fail(1, "error downloading %s: %v", a, err)
		}
		n++
	}
	if n == 0 {
		return fail(1, "no artifact matches any of the names or patterns provided")
	}
	return nil
}

// copyTree copies the regular files and folders under from into to,
// refusing to overwrite a file (gh's extraction opens with O_EXCL).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, err := os.Lstat(target); err == nil {
			return fmt.Errorf("open %s: file exists", target)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
