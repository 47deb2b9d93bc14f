package github

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// Which run is the story's (docs/github-actions.md#which-run-is-the-storys):
// anyone who can push a workflow or dispatch one can start a run of
// saga-story.yml under any name, so a run counts only when it is the one
// saga-lsp's dispatch created — a workflow_dispatch of the workflow
// (by its id) on the branch it was dispatched on, named with the random
// id generated for that dispatch and recorded in its dispatch event —
// and, once found, it is followed by its run id. What its artifact says
// is checked before it is believed (checkRecord).

// EventDispatch is GitHub's event of a dispatched run.
const EventDispatch = "workflow_dispatch"

// Expect is what the run a dispatch created must be.
type Expect struct {
	Name     string // its run-name: RunName(story, the dispatch's random id)
	ID       int64  // its run id once found (0: not yet)
	Workflow int64  // the workflow's id (0: a dispatch an older saga-lsp recorded)
	Ref      string // the branch dispatched on ("": idem)
}

// ExpectOf is what the run of the dispatch d (a story's run as recorded
// here) must be; nil when d is no dispatch to GitHub Actions.
func ExpectOf(d *runs.Run) *Expect {
	if d == nil || d.Backend != readmodel.BackendGitHub || d.RunName == "" {
		return nil
	}
	return &Expect{Name: d.RunName, ID: d.ActionsRun, Workflow: d.Workflow, Ref: d.Ref}
}

// mismatch says why r is not the run w expects ("": it is).
func (w *Expect) mismatch(r RunInfo) string {
	switch {
	case w == nil:
		return "no dispatch of the story is recorded here (saga-lsp follows only the runs it dispatched)"
	case r.Event != EventDispatch:
		return fmt.Sprintf("started by a %s event, not by a dispatch", cmp.Or(r.Event, "unknown"))
	case w.Workflow != 0 && r.WorkflowID != w.Workflow:
		return fmt.Sprintf("a run of workflow %d, not of %s (%d)", r.WorkflowID, WorkflowFile, w.Workflow)
	case w.Ref != "" && r.HeadBranch != w.Ref:
		return fmt.Sprintf("run on branch %q, not on %q, where the story was dispatched", r.HeadBranch, w.Ref)
	case w.ID != 0 && r.ID != w.ID:
		return fmt.Sprintf("not the run recorded for the story's dispatch (%d)", w.ID)
	case r.DisplayTitle != w.Name:
		return "its name does not hold the random id of the story's dispatch"
	}
	return ""
}

// pick is, of the listed runs, the one w expects — the first created when
// several bear its name (a copy dispatched after the name was seen) —
// and the others named as the story's, ignored with why.
func pick(list []RunInfo, story string, w *Expect) (*RunInfo, []readmodel.IgnoredRun) {
	var found []*RunInfo
	var ignored []readmodel.IgnoredRun
	for i := range list {
		r := &list[i]
		s, _, named := ParseRunName(r.DisplayTitle)
		if (!named || s != story) && (w == nil || w.ID == 0 || r.ID != w.ID) {
			continue
		}
		if why := w.mismatch(*r); why != "" {
			ignored = append(ignored, readmodel.IgnoredRun{ID: r.ID, URL: r.URL, Why: why})
			continue
		}
		found = append(found, r)
	}
	if len(found) == 0 {
		return nil, ignored
	}
	slices.SortFunc(found, func(a, b *RunInfo) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, r := range found[1:] {
		ignored = append(ignored, readmodel.IgnoredRun{ID: r.ID, URL: r.URL,
			Why: fmt.Sprintf("created after run %d under the same name (its dispatch's id copied): the first is the story's", found[0].ID)})
	}
	return found[0], ignored
}

// Artifact and record bounds: what a run uploaded is read only within
// them (a run's job is code the repository holds).
const (
	// MaxArtifact bounds the run's artifact, as GitHub sizes it (its zip)
	// and as extracted: the events and output of one story's run.
	MaxArtifact = 64 << 20
	// MaxRecord bounds its record.json.
	MaxRecord = 1 << 20
)

// artifactSize is the size GitHub gives the run's artifact name (ok false:
// it has none): `gh api …/actions/runs/<id>/artifacts`.
func artifactSize(ctx context.Context, gh, dir string, id int64, name string) (int64, bool, error) {
	out, err := ghRun(ctx, gh, dir, "api", "repos/{owner}/{repo}/actions/runs/"+strconv.FormatInt(id, 10)+"/artifacts?per_page=100")
	if err != nil {
		return 0, false, fmt.Errorf("gh api (the run's artifacts): %w", err)
	}
	var list struct {
		Artifacts []struct {
			Name    string `json:"name"`
			Size    int64  `json:"size_in_bytes"`
			Expired bool   `json:"expired"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return 0, false, fmt.Errorf("gh api printed what is not GitHub's list of artifacts: %v", err)
	}
	for _, a := range list.Artifacts {
		if a.Name == name && !a.Expired {
			return a.Size, true, nil
		}
	}
	return 0, false, nil
}

// treeSize is the size of the regular files under dir, stopping past
// limit.
func treeSize(dir string, limit int64) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if n += fi.Size(); n > limit {
				return errTooBig
			}
		}
		return nil
	})
	return n, err
}

var errTooBig = errors.New("too big")

// readRecord reads a downloaded record.json, at most MaxRecord bytes, not
// following a link.
func readRecord(path string) (runs.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return runs.Record{}, err
	}
	defer f.Close()
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return runs.Record{}, fmt.Errorf("record.json is not a file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRecord+1))
	if err != nil {
		return runs.Record{}, err
	}
	if len(data) > MaxRecord {
		return runs.Record{}, fmt.Errorf("record.json is over %d bytes", MaxRecord)
	}
	var rec runs.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return runs.Record{}, fmt.Errorf("record.json is not a run record: %v", err)
	}
	return rec, nil
}

// checkRecord says why the record a run of story uploaded is not to be
// believed ("": it is): it must be the story's, on the story's branch,
// its pull request in the run's repository (runURL's), its cost a finite
// non-negative number.
func checkRecord(rec runs.Record, story, runURL string) string {
	if rec.Story != story {
		return fmt.Sprintf("it is story %q's, not %s's", rec.Story, story)
	}
	if rec.Branch != "" && rec.Branch != runs.StoryBranch(story) {
		return fmt.Sprintf("its branch %q is not the story's (%s)", rec.Branch, runs.StoryBranch(story))
	}
	if rec.PR != "" {
		repo, _, ok := strings.Cut(runURL, "/actions/runs/")
		rest, in := strings.CutPrefix(rec.PR, repo)
		if !ok || !in || !regexp.MustCompile(`^/pull/[1-9][0-9]{0,9}$`).MatchString(rest) {
			return fmt.Sprintf("its pull request %q is not one of the run's repository (%s)", rec.PR, repo)
		}
	}
	for _, c := range []float64{rec.Cost, rec.Spent} {
		if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return fmt.Sprintf("its cost %v is not a non-negative number", c)
		}
	}
	return ""
}
