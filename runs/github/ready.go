package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/doctor"
)

// Ready is what every dispatch of a repository needs, checked once: gh,
// origin's default branch, what is wrong with the workflow there but does
// not stop a dispatch.
type Ready struct {
	GH       string
	Default  string // origin's default branch
	Workflow int64  // the workflow's id on GitHub: the runs of a dispatch are its
	// Review: the workflow takes the input review (TakesReview), which a
	// review round is dispatched with.
	Review   bool
	Warnings []string
}

// CheckReady checks, before anything is dispatched, what every job needs:
// gh installed and logged in, origin reachable, the workflow on its
// default branch (GitHub dispatches it from there). A workflow a person
// edited, or that another saga-lsp release wrote than the one whose
// workflow is want (nil: unknown), is a warning: its jobs run what it says.
func CheckReady(ctx context.Context, root string, env func(string) string, want []byte) (*Ready, error) {
	gh, err := runs.LookProgram(env, runs.ProgramGH)
	if err != nil {
		return nil, &DispatchError{"gh (GitHub's CLI) is not installed: install it and run `gh auth login`, or set " + runs.EnvGH}
	}
	if _, err := ghRun(ctx, gh, root, "auth", "status"); err != nil {
		return nil, &DispatchError{"gh is not logged in to GitHub: run `gh auth login` (" + err.Error() + ")"}
	}
	g := git.Repo{Dir: root}
	if !g.HasRemote(ctx) {
		return nil, &DispatchError{"the repository has no origin remote: GitHub Actions runs what is pushed to it"}
	}
	head, err := g.Run(ctx, "ls-remote", "--symref", "origin", "HEAD")
	if err != nil {
		return nil, &DispatchError{fmt.Sprintf("cannot reach origin: %v", err)}
	}
	rd := &Ready{GH: gh}
	for line := range strings.Lines(head) {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			rd.Default, _, _ = strings.Cut(rest, "\t")
		}
	}
	def := rd.Default
	if def == "" {
		return nil, &DispatchError{"cannot tell origin's default branch (`git ls-remote --symref origin HEAD` names none)"}
	}
	if _, err := g.Retry(ctx, "fetch", "-q", "origin", "+refs/heads/"+def+":refs/remotes/origin/"+def); err != nil {
		return nil, &DispatchError{fmt.Sprintf("git fetch origin %s: %v", def, err)}
	}
	content, err := g.Raw(ctx, "show", "refs/remotes/origin/"+def+":"+WorkflowPath)
	if err != nil {
		return nil, &DispatchError{fmt.Sprintf("origin's default branch %s has no %s: run `saga-lsp install --github-actions`, commit the file and push it to %s (GitHub runs a dispatched workflow from the default branch)", def, WorkflowPath, def)}
	}
	if !TakesRunID(content) {
		return nil, &DispatchError{fmt.Sprintf("%s on %s does not take the input %s in its run-name, which saga-lsp finds its runs by (an older saga-lsp wrote it, or it was edited): "+
			"run `saga-lsp install --github-actions` (--force over an edited one), then commit and push it to %s", WorkflowPath, def, InputRunID, def)}
	}
	rd.Review = TakesReview(content)
	if rd.Workflow, err = workflowID(ctx, gh, root); err != nil {
		return nil, &DispatchError{fmt.Sprintf("GitHub does not answer with the id of workflow %s (%v): is it pushed to %s, and is `gh auth status` logged in to origin's host?", WorkflowFile, err, def)}
	}
	switch {
	case !Pristine([]byte(content)):
		rd.Warnings = append(rd.Warnings, fmt.Sprintf("%s on %s was edited since saga-lsp wrote it: it must still take the inputs story, base and run-id", WorkflowPath, def))
	case want != nil && !bytes.Equal([]byte(content), want):
		rd.Warnings = append(rd.Warnings, fmt.Sprintf("%s on %s was written by %s, not by this one: its jobs run that saga-lsp — bring it up to date with `saga-lsp install --github-actions`, then commit and push it to %s",
			WorkflowPath, def, writer(content), def))
	}
	return rd, nil
}

// TakesRunID tells whether a workflow puts the input run-id in its
// run-name, which saga-lsp matches its runs by
// (docs/github-actions.md#which-run-is-the-storys); that it declares the
// input GitHub checks at each dispatch. Compiled where used, not at init
// (as workflowSource).
func TakesRunID(content string) bool {
	return regexp.MustCompile(`(?m)^run-name:.*\$\{\{\s*inputs\.` + regexp.QuoteMeta(InputRunID) + `\s*\}\}`).MatchString(content)
}

// CheckReview refuses a review round's dispatch to a workflow that does
// not take the input review (*DispatchError, saying how to update it).
func (rd *Ready) CheckReview() error {
	if rd.Review {
		return nil
	}
	return &DispatchError{fmt.Sprintf("%s on %s does not take the input %s, which a review round is dispatched with (an older saga-lsp wrote it, or it was edited): "+
		"run `saga-lsp install --github-actions` (--force over an edited one), then commit and push it to %s", WorkflowPath, rd.Default, InputReview, rd.Default)}
}

// TakesReview tells whether a workflow takes the input review and hands
// it to its worker (docs/review.md#on-github-actions): workflows an older
// saga-lsp wrote do not, and GitHub would refuse a dispatch with it.
func TakesReview(content string) bool {
	return regexp.MustCompile(`\$\{\{\s*inputs\.` + regexp.QuoteMeta(InputReview) + `\s*\}\}`).MatchString(content)
}

// workflowID is the workflow's id on GitHub (`gh api`): the runs of a
// dispatch carry it (workflowDatabaseId).
func workflowID(ctx context.Context, gh, root string) (int64, error) {
	out, err := ghRun(ctx, gh, root, "api", "repos/{owner}/{repo}/actions/workflows/"+WorkflowFile)
	if err != nil {
		return 0, err
	}
	var wf struct {
		ID   int64  `json:"id"`
		Path string `json:"path"`
	}
	if err := json.Unmarshal(out, &wf); err != nil || wf.ID == 0 {
		return 0, fmt.Errorf("gh api printed what is not a workflow: %q", out)
	}
	if wf.Path != WorkflowPath {
		return 0, fmt.Errorf("GitHub's workflow %s is %s", WorkflowFile, wf.Path)
	}
	return wf.ID, nil
}

// writer is the saga-lsp a workflow's header names as its writer.
func writer(content string) string {
	_, rest, ok := strings.Cut(content, "(saga-lsp ")
	if v, _, ok2 := strings.Cut(rest, ")"); ok && ok2 && !strings.ContainsAny(v, "\n") {
		return "saga-lsp " + v
	}
	return "another saga-lsp"
}

// WorkflowCheck is `saga-lsp doctor --on github`'s check of the workflow
// (runs/doctor): in the checkout at root, saga-lsp's and unedited, and on
// origin's default branch as last fetched — offline, so not the branch on
// GitHub now (CheckReady fetches it before a dispatch).
func WorkflowCheck(ctx context.Context, root string) doctor.Check {
	const name = "workflow"
	install := "run `saga-lsp install --github-actions`, commit " + WorkflowPath + " and push it to origin's default branch"
	data, err := os.ReadFile(filepath.Join(root, WorkflowPath))
	if err != nil {
		return doctor.Check{Name: name, Level: doctor.Error, Detail: "no " + WorkflowPath + " in " + root + ": GitHub Actions has no job to run a story in", Fix: install}
	}
	if !Pristine(data) {
		return doctor.Check{Name: name, Level: doctor.Warning, Detail: WorkflowPath + " was edited since saga-lsp wrote it: it must still take the inputs story, base and run-id",
			Fix: "or write it anew: saga-lsp install --github-actions"}
	}
	g := git.Repo{Dir: root}
	def, err := g.Run(ctx, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
	if err != nil {
		return doctor.Check{Name: name, Level: doctor.Unchecked, Detail: WorkflowPath + " is in the checkout; whether origin's default branch has it is not checked offline (no refs/remotes/origin/HEAD here)",
			Fix: "git remote set-head origin --auto, then saga-lsp doctor --on github again"}
	}
	there, err := g.Raw(ctx, "show", def+":"+WorkflowPath)
	switch {
	case err != nil:
		return doctor.Check{Name: name, Level: doctor.Error, Detail: fmt.Sprintf("%s has no %s (as last fetched): GitHub dispatches the workflow from the default branch", def, WorkflowPath), Fix: install}
	case there != string(data):
		return doctor.Check{Name: name, Level: doctor.Warning, Detail: fmt.Sprintf("%s in the checkout differs from %s's (as last fetched): the jobs run %s's", WorkflowPath, def, def),
			Fix: "commit it and push it to " + strings.TrimPrefix(def, "origin/")}
	}
	return doctor.Check{Name: name, Level: doctor.OK, Detail: fmt.Sprintf("%s, on %s as last fetched (`git fetch` to see GitHub's now)", WorkflowPath, def)}
}
