package control

// A completed story's pull request, opened after its run
// (docs/commands.md#run--stop): when its worker could not open one — gh
// missing or logged out, no origin, a push or gh that failed
// (readmodel.StoryState.NoPR) — `saga-lsp run <story>` opens it without running the
// agent again: the branch pushed, the PR created against the base its run
// built on (a stacked story's: its blocker's branch, whose own missing PR
// is opened first), the run record keeping its URL.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// OpenPROptions configure OpenPR.
type OpenPROptions struct {
	Root       string
	Story      string
	SessionDir string
	Workspace  *store.Workspace // loaded with Parser
	Parser     *store.Parser
	Env        func(string) string // default os.Getenv
	Now        func() time.Time    // default time.Now
}

// OpenedPR is a pull request OpenPR opened (or found: Existing).
type OpenedPR struct {
	Story    string `json:"story"`
	URL      string `json:"url"`
	Head     string `json:"head"`
	Base     string `json:"base"`
	Existing bool   `json:"existing,omitempty"` // gh already had one for the branch (opened by hand)
	// Why is why the worker had opened none (readmodel.NoPRState.Why).
	Why string `json:"why"`
	// Blockers are the PRs of the story's blockers opened first, for the
	// branch it is stacked on.
	Blockers []OpenedPR `json:"blockers,omitempty"`
}

// OpenPR opens the pull request of a completed story that has none
// (readmodel.StoryState.NoPR), without running its agent. It fails with *NoPRError
// naming what stops it (gh, its login, origin, the push) and the next
// step.
func OpenPR(ctx context.Context, o OpenPROptions) (*OpenedPR, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	return openPR(ctx, o, o.Story, map[string]bool{})
}

func openPR(ctx context.Context, o OpenPROptions, story string, seen map[string]bool) (*OpenedPR, error) {
	seen[story] = true
	ev := readmodel.NewEvidence(ctx, o.Root, o.SessionDir, o.Parser)
	st := ev.Story(ctx, o.Workspace, story)
	if st.State != runs.StatusCompleted || st.NoPR == nil {
		return nil, &NoPRError{Story: story, Why: "it is " + st.State + ", or has a pull request already", Next: "`saga-lsp status " + story + "` says which"}
	}
	fail := func(why, next string) error {
		return &NoPRError{Story: story, Why: why, Next: next + "; then `saga-lsp run " + story + "` opens it"}
	}
	missing := func(why, next string) error {
		return &NoPRError{Story: story, Why: why, Next: next + "; then `saga-lsp run " + story + "` opens it", Missing: true}
	}
	gh, err := runs.LookProgram(o.Env, runs.ProgramGH)
	if err != nil {
		return nil, missing(runs.Program(o.Env, runs.ProgramGH)+" (GitHub's CLI) is not installed", "install it and log in (`gh auth login`), or set "+runs.EnvGH)
	}
	repo := git.Repo{Dir: o.Root}
	if !repo.HasRemote(ctx) {
		return nil, missing("the repository has no remote named origin", "add one (`git remote add origin <url>`)")
	}
	if out, err := runs.GHCommand(ctx, gh, o.Root, "auth", "status").CombinedOutput(); err != nil {
		return nil, missing("gh is not logged in ("+firstLineOf(string(out), err)+")", "log in with `gh auth login`")
	}
	branch := runs.StoryBranch(story)
	opened := &OpenedPR{Story: story, Head: branch, Why: st.NoPR.Why}
	base, blockers, err := prBase(ctx, o, repo, st, seen)
	if err != nil {
		return nil, err
	}
	opened.Base, opened.Blockers = base, blockers
	if ev.HasBranch(story) {
		if _, err := repo.Retry(ctx, "push", "-q", "-u", "origin", branch); err != nil {
			return nil, fail(fmt.Sprintf("push %s: %v", branch, err), "push it yourself (`git push -u origin "+branch+"`)")
		}
	}
	out, err := runs.GHCommand(ctx, gh, o.Root, "pr", "list", "--head", branch, "--state", "all", "--json", "url,state", "--limit", "1").Output()
	if err != nil {
		return nil, fail("gh pr list: "+ghError(err).Error(), "see `gh pr list --head "+branch+"`")
	}
	var prs []struct{ URL, State string }
	if err := json.Unmarshal(out, &prs); err != nil {
		return nil, fmt.Errorf("gh pr list: %w", err)
	}
	state := runs.PROpen
	if len(prs) > 0 && prs[0].URL != "" {
		opened.URL, opened.Existing, state = prs[0].URL, true, prs[0].State
	} else {
		body := lateBody(ctx, o, story, base, st.NoPR.Why)
		out, err := runs.GHCommand(ctx, gh, o.Root, "pr", "create", "--title", "Story: "+story, "--body", body,
			"--base", base, "--head", branch).CombinedOutput()
		if err != nil {
			return nil, fail("gh pr create: "+firstLineOf(string(out), err), "see `gh pr create --base "+base+" --head "+branch+"`")
		}
		if opened.URL = lastURLOf(string(out)); opened.URL == "" {
			return nil, fmt.Errorf("gh pr create printed no URL: %s", strings.TrimSpace(string(out)))
		}
	}
	// The record keeps it: every reader of local evidence sees the PR
	// (readmodel.Evidence.Story) and no "no PR yet" any more.
	rec, ok := runs.ReadRecord(o.Root, story)
	if !ok {
		rec = runs.Record{Story: story, Session: st.Session, Status: runs.StatusCompleted, Ended: st.Ended, Branch: branch, Base: st.Base}
	}
	rec.PR, rec.PRState, rec.PRStateAt, rec.NoPR = opened.URL, state, o.Now().UTC(), nil
	if err := runs.WriteRecord(o.Root, rec); err != nil {
		return opened, fmt.Errorf("opened %s, but the run record: %w", opened.URL, err)
	}
	return opened, nil
}

// prBase is the base of the story's PR: the base its run built on. A
// stacked story's is its blocker's branch (as in any epic run): a blocker
// that completed without a PR gets its own first (which pushes its
// branch); a blocker's branch merged since gives way to the epic's base.
func prBase(ctx context.Context, o OpenPROptions, repo git.Repo, st readmodel.StoryState, seen map[string]bool) (string, []OpenedPR, error) {
	base := st.Base
	if base == "" {
		base = verify.DefaultBranch(ctx, repo)
	}
	blocker, _, stacked := runs.StoryOfRunBranch(base)
	if !stacked {
		return base, nil, nil
	}
	bst := readmodel.NewEvidence(ctx, o.Root, o.SessionDir, o.Parser).Story(ctx, o.Workspace, blocker)
	if bst.NoPR != nil && !seen[blocker] {
		b, err := openPR(ctx, o, blocker, seen)
		if err != nil {
			return "", nil, err
		}
		return base, append(b.Blockers, *b), nil
	}
	if repo.OK(ctx, "ls-remote", "--exit-code", "--heads", "origin", base) {
		return base, nil, nil
	}
	if bst.PRState == runs.PRMerged || !repo.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+base) {
		return verify.EpicBase(ctx, repo, o.Root, base), nil, nil // merged and deleted: its work is on the epic's base
	}
	return "", nil, &NoPRError{Story: st.ID, Why: "the branch it is stacked on, " + base + ", is not on origin",
		Next: fmt.Sprintf("push it (`git push -u origin %s`), then `saga-lsp run %s` opens it", base, st.ID)}
}

// lateBody is the description of a PR opened after the story's run: the
// story's description, what it is stacked on, the epic's graph, and why
// its worker did not open it.
func lateBody(ctx context.Context, o OpenPROptions, story, base, why string) string {
	var b strings.Builder
	s := o.Workspace.Story(story)
	if s != nil && s.Description != "" {
		b.WriteString(s.Description + "\n\n")
	}
	if blocker, _, stacked := runs.StoryOfRunBranch(base); stacked {
		fmt.Fprintf(&b, "Stacked on `%s`: this branch starts from story `%s`'s work.\n\n", base, blocker)
	}
	if s != nil && s.EpicID() != "" {
		if st, err := readmodel.EpicState(ctx, o.Workspace, readmodel.EpicQuery{Root: o.Root, Epic: s.EpicID(), SessionDir: o.SessionDir, Env: o.Env, Parser: o.Parser}); err == nil {
			b.WriteString(EpicGraph(o.Workspace, st, nil))
		}
	}
	fmt.Fprintf(&b, "Story `%s`, executed by saga-lsp worker; this pull request was opened after the run by `saga-lsp run %s` (%s).", story, story, why)
	return b.String()
}

// lastURLOf is the last line of out that is a URL (gh pr create's).
func lastURLOf(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "http") {
			return l
		}
	}
	return ""
}
