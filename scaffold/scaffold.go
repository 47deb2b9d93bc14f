// Package scaffold creates stories, tasks and epics in a workspace, in its
// dialect (docs/format.md): each operation validates names before they reach
// a path, writes atomically, never overwrites, and reports what it changed.
// The CLI's `new` and the language server's create commands call it.
package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store"
)

// Changes lists the files an operation created or updated, relative to the
// workspace root.
type Changes struct {
	Created []string `json:"created"`
	Updated []string `json:"updated"`
}

// NewStory describes a story to create.
type NewStory struct {
	Name        string
	Title       string
	Description string
	Epic        string   // when set, the story is listed in the epic's children
	BlockedBy   []string // sibling stories in the epic that come first
}

// CreateStory writes .saga/stories/<name>/story.json and, with an epic,
// appends the story to the epic's children, in the epic's dialect (see
// store.Epic.NewChild): in the seeds' dialect a name without the "<epic>--"
// prefix gets it, so the canonical name shows where it belongs; in upstream
// SAGA's flat dialect the name stays as given and the story names the epic
// in its "epic" field. A name the epic already lists is kept as it is.
func CreateStory(ctx context.Context, p *store.Parser, root string, s NewStory) (Changes, error) {
	var ch Changes
	if err := checkNewName("story name", s.Name, true); err != nil {
		return ch, err
	}
	if strings.TrimSpace(s.Title) == "" {
		return ch, store.Usagef("a story needs a title: --title \"…\"")
	}
	doc := store.StoryDoc{ID: s.Name, Title: s.Title, Description: s.Description}
	var epicRel string
	if s.Epic != "" {
		if !store.ValidID(s.Epic) {
			return ch, store.Usagef("invalid epic id %q (e.g. %s)", s.Epic, store.ExampleName(s.Epic, false))
		}
		epicRel = existingEpicFile(root, s.Epic)
		if epicRel == "" {
			if near := store.DidYouMean(s.Epic, store.EpicNames(root)); near != "" {
				return ch, store.Usagef("no epic %q%s", s.Epic, near)
			}
			return ch, store.Usagef("no epic %q: create it first with `saga-lsp new epic %s --title …`", s.Epic, s.Epic)
		}
		e, err := readEpic(p, root, epicRel)
		if err != nil {
			return ch, err
		}
		doc.ID, doc.Epic = e.NewChild(s.Name)
		if err := store.CheckNameLength("story name", doc.ID); err != nil {
			return ch, &store.UsageError{Msg: err.Error()}
		}
		if s.BlockedBy, err = siblings(e, doc.ID, s.BlockedBy); err != nil {
			return ch, err
		}
	} else if len(s.BlockedBy) > 0 {
		return ch, store.Usagef("--blocked-by for a story needs --epic: the order between stories lives in the epic")
	}
	rel := store.StoryFileRel(doc.ID)
	if err := createDoc(p, root, rel, doc); err != nil {
		return ch, err
	}
	ch.Created = append(ch.Created, rel)
	if s.Epic == "" {
		return ch, nil
	}
	child := store.ChildDoc{ID: doc.ID, BlockedBy: nonNil(s.BlockedBy)}
	if err := addEpicChild(ctx, p, root, epicRel, s.Epic, child); err != nil {
		return ch, fmt.Errorf("story created at %s, but adding it to epic %s failed: %w", rel, s.Epic, err)
	}
	ch.Updated = append(ch.Updated, epicRel)
	return ch, nil
}

// siblings resolves --blocked-by names to the epic's children: a child id
// as written, with the "<epic>--" prefix added (the seeds' dialect) or
// dropped (upstream's flat one). A name that is no sibling, or the story
// itself, is refused: scaffolding never writes a dangling reference.
func siblings(e *store.Epic, self string, names []string) ([]string, error) {
	var out []string
	for _, b := range names {
		if !store.ValidCanonical(b) {
			return nil, store.Usagef("invalid story name %q in --blocked-by", b)
		}
		id := ""
		for _, cand := range []string{b, e.ID + "--" + b, strings.TrimPrefix(b, e.ID+"--")} {
			if e.Child(cand) != nil {
				id = cand
				break
			}
		}
		switch {
		case id == "" && (b == self || e.ID+"--"+b == self):
			return nil, store.Usagef("story %s cannot be blocked by itself", self)
		case id == "":
			var known []string
			for _, c := range e.Children {
				known = append(known, c.ID)
			}
			hint := "it has no stories yet"
			if len(known) > 0 {
				hint = "its stories: " + strings.Join(known, ", ")
			}
			return nil, store.Usagef("--blocked-by %s: no story %q in epic %s (%s)", b, b, e.ID, hint)
		case id == self:
			return nil, store.Usagef("story %s cannot be blocked by itself", self)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// readEpic parses an epic file; one that does not parse as an epic must be
// fixed before a story can join it.
func readEpic(p *store.Parser, root, rel string) (*store.Epic, error) {
	src, why := filesafe.ReadBounded(filepath.Join(root, filepath.FromSlash(rel)), rel)
	if why != "" {
		return nil, errors.New(why)
	}
	f := p.Parse(rel, src, -1)
	for _, d := range f.Local {
		if d.Code == store.CodeJSONSyntax {
			return nil, fmt.Errorf("%s: fix the epic first (`saga-lsp check` says what is wrong)", d)
		}
	}
	return f.Epic, nil
}

// NewTask describes a task to create.
type NewTask struct {
	Story       string
	ID          string
	Subject     string
	Description string
	ActiveForm  string
	BlockedBy   []string
	Priority    string
	Guidance    string
	DoneWhen    string
	Checks      []string
	// CheckTimeout is seconds per check; 0 leaves the default.
	CheckTimeout float64
}

// CreateTask writes .saga/stories/<story>/<id>.json.
func CreateTask(ctx context.Context, p *store.Parser, root string, t NewTask) (Changes, error) {
	var ch Changes
	if !store.ValidCanonical(t.Story) {
		return ch, store.Usagef("invalid story name %q", t.Story)
	}
	if err := checkNewName("task id", t.ID, false); err != nil {
		return ch, err
	}
	if store.ReservedTaskID(t.ID) {
		return ch, store.Usagef("%s", store.ReservedTaskIDProblem("task id", t.ID))
	}
	if strings.TrimSpace(t.Subject) == "" {
		return ch, store.Usagef("a task needs a subject: --subject \"…\"")
	}
	if t.Priority != "" && !slices.Contains([]string{"critical", "high", "medium", "low"}, t.Priority) {
		return ch, store.Usagef("invalid priority %q: use critical, high, medium or low", t.Priority)
	}
	for _, c := range t.Checks {
		if strings.TrimSpace(c) == "" {
			return ch, store.Usagef("--check needs a command (a blank one would check nothing), e.g. --check 'go test ./...'")
		}
	}
	if t.CheckTimeout < 0 || t.CheckTimeout > store.MaxCheckTimeout.Seconds() {
		return ch, store.Usagef("--check-timeout must be a number of seconds in (0, %g], got %g", store.MaxCheckTimeout.Seconds(), t.CheckTimeout)
	}
	dir := filepath.Join(root, filepath.FromSlash(store.StoryDirRel(t.Story)))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if near := store.DidYouMean(t.Story, store.StoryNames(root)); near != "" {
			return ch, store.Usagef("no story %q%s", t.Story, near)
		}
		return ch, store.Usagef("no story %q: create it first with `saga-lsp new story %s --title …`", t.Story, t.Story)
	}
	for _, b := range t.BlockedBy {
		if !store.ValidID(b) {
			return ch, store.Usagef("invalid task id %q in --blocked-by", b)
		}
		if b == t.ID {
			return ch, store.Usagef("task %q cannot be blocked by itself", t.ID)
		}
		if _, err := os.Stat(filepath.Join(dir, b+".json")); err != nil {
			return ch, store.Usagef("--blocked-by %s: no task %q in story %s", b, b, t.Story)
		}
	}
	rel := store.TaskFileRel(t.Story, t.ID)
	doc := store.TaskDoc{ID: t.ID, Subject: t.Subject, Description: t.Description, ActiveForm: t.ActiveForm,
		Status: store.StatusPending, BlockedBy: nonNil(t.BlockedBy), Priority: t.Priority, Guidance: t.Guidance, DoneWhen: t.DoneWhen,
		Checks: t.Checks, CheckTimeout: t.CheckTimeout}
	if err := createDoc(p, root, rel, doc); err != nil {
		return ch, err
	}
	ch.Created = append(ch.Created, rel)
	return ch, nil
}

// NewEpic describes an epic to create.
type NewEpic struct {
	ID          string
	Title       string
	Description string
}

// CreateEpic writes the epic in the workspace's dialect: a single file
// .saga/epics/<id>.json when most epics already are single files (upstream
// SAGA's), else .saga/epics/<id>/epic.json. Its children are the stories
// that already name it (by their "epic" field or their "<id>--" prefix), so
// creating the epic a story names resolves that story's orphan-story.
func CreateEpic(ctx context.Context, p *store.Parser, root string, e NewEpic) (Changes, error) {
	var ch Changes
	if err := checkNewName("epic id", e.ID, false); err != nil {
		return ch, err
	}
	if strings.TrimSpace(e.Title) == "" {
		return ch, store.Usagef("an epic needs a title: --title \"…\"")
	}
	if rel := existingEpicFile(root, e.ID); rel != "" {
		return ch, fmt.Errorf("epic %q already exists at %s; nothing was written: %w", e.ID, rel, fs.ErrExist)
	}
	children := []store.ChildDoc{}
	if _, err := os.Stat(filepath.Join(root, ".saga")); err == nil {
		ws, err := p.Load(root)
		if err != nil {
			return ch, err
		}
		for _, id := range ws.SortedStoryIDs() {
			if s := ws.Copies(id); storyEpic(s) == e.ID {
				children = append(children, store.ChildDoc{ID: id, BlockedBy: []string{}})
			}
		}
	}
	rel := store.EpicFileRel(e.ID)
	if singleFileEpics(root) {
		rel = store.SingleEpicFileRel(e.ID)
	}
	doc := store.EpicDoc{ID: e.ID, Title: e.Title, Description: e.Description, Children: children}
	if err := createDoc(p, root, rel, doc); err != nil {
		return ch, err
	}
	ch.Created = append(ch.Created, rel)
	return ch, nil
}

// storyEpic is the epic a story names: its main copy's, else its worktree
// copy's.
func storyEpic(c store.StoryCopies) string {
	for _, s := range []*store.Story{c.Main, c.Worktree} {
		if s != nil {
			return s.EpicID()
		}
	}
	return ""
}

// singleFileEpics tells whether the workspace keeps its epics as single
// files (.saga/epics/<id>.json, upstream SAGA's dialect) rather than
// folders (.saga/epics/<id>/epic.json, the seeds'): whichever most epics
// use, folders when there is none or a tie.
func singleFileEpics(root string) bool {
	des, _ := os.ReadDir(filepath.Join(root, ".saga", "epics"))
	files, folders := 0, 0
	for _, de := range des {
		rel := ".saga/epics/" + de.Name()
		switch {
		case de.Name()[0] == '.':
		case de.IsDir():
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel), "epic.json")); err == nil {
				folders++
			}
		default:
			if kind, _, _ := store.Classify(rel); kind == store.KindEpic {
				files++
			}
		}
	}
	return files > folders
}

// existingEpicFile finds an epic in either dialect.
func existingEpicFile(root, id string) string {
	for _, rel := range []string{store.EpicFileRel(id), store.SingleEpicFileRel(id)} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			return rel
		}
	}
	return ""
}

// createDoc encodes doc, checks it passes the file's own rules, and creates
// the file, refusing to replace one.
func createDoc(p *store.Parser, root, rel string, doc any) error {
	data, err := store.MarshalIndent(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", rel, err)
	}
	if err := Validate(p, rel, data); err != nil {
		return err
	}
	// Below the root only: a repository's link (.saga/stories to a folder
	// elsewhere) is never written through out of it.
	b, err := filesafe.OpenBeneath(root)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", rel, err)
	}
	if err := b.CreateFileAtomic(rel, data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; nothing was written (pick another name or edit the file): %w", rel, fs.ErrExist)
		}
		return err
	}
	return nil
}

// Validate refuses bytes that would have error diagnostics of their own:
// what saga-lsp writes into a workspace parses clean by its own rules.
func Validate(p *store.Parser, rel string, data []byte) error {
	f := p.Parse(rel, data, -1)
	for _, d := range f.Local {
		if d.Severity == store.SeverityError {
			return store.Usagef("%s would be invalid (%s: %s); nothing was written", rel, d.Code, d.Message)
		}
	}
	return nil
}

// addEpicChild appends a child to the epic under the epic's lock, editing
// only the children array.
func addEpicChild(ctx context.Context, p *store.Parser, root, epicRel, epic string, child store.ChildDoc) error {
	lock, err := filesafe.AcquireLock(ctx, root, "epic-"+epic)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return filesafe.UpdateFileBeneath(root, epicRel, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("%s disappeared", epicRel)
		}
		cur := p.Parse(epicRel, old, -1)
		if cur.Epic != nil && cur.Epic.Child(child.ID) != nil {
			return old, nil // already listed: nothing to do
		}
		data, err := store.AppendElement(old, "/children", child)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", epicRel, err)
		}
		if err := Validate(p, epicRel, data); err != nil {
			return nil, err
		}
		return data, nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkNewName is checkName with an example, then the length a name may
// have when it is created.
func checkNewName(what, name string, canonical bool) error {
	if err := store.CheckName(what, name, canonical, true); err != nil {
		return err
	}
	if err := store.CheckNameLength(what, name); err != nil {
		return &store.UsageError{Msg: err.Error()}
	}
	return nil
}
