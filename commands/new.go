// Package commands holds the operations the CLI and the language server's
// executeCommand share: creating stories, tasks and epics, and (later)
// running and stopping story workers. Each validates names before they reach
// a path, writes atomically, and reports what it changed.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// Changes lists the files an operation created or updated, relative to the
// workspace root.
type Changes struct {
	Created []string `json:"created"`
	Updated []string `json:"updated"`
}

// UsageError marks a mistake in what the user asked for (a bad name, a
// missing story) as opposed to an I/O failure; both exit 2, but only usage
// errors print the usage line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// NewStory describes a story to create.
type NewStory struct {
	Name        string
	Title       string
	Description string
	Epic        string   // when set, the story is listed in the epic's children
	BlockedBy   []string // sibling stories in the epic that come first
}

// CreateStory writes .saga/stories/<name>/story.json and, with an epic,
// appends the story to the epic's children. With an epic, a name without the
// "<epic>--" prefix gets it, so the canonical name shows where it belongs.
func CreateStory(ctx context.Context, p *store.Parser, root string, s NewStory) (Changes, error) {
	var ch Changes
	if s.Epic != "" && !strings.HasPrefix(s.Name, s.Epic+"--") && store.ValidCanonical(s.Name) {
		s.Name = s.Epic + "--" + s.Name
	}
	if !store.ValidCanonical(s.Name) {
		return ch, usagef("invalid story name %q: use lowercase ids of letters, digits and single dashes, joined by \"--\" (e.g. %s)", s.Name, exampleName(s.Name, true))
	}
	if err := store.CheckNameLength("story name", s.Name); err != nil {
		return ch, &UsageError{Msg: err.Error()}
	}
	if strings.TrimSpace(s.Title) == "" {
		return ch, usagef("a story needs a title: --title \"…\"")
	}
	var epicRel string
	if s.Epic != "" {
		if !store.ValidID(s.Epic) {
			return ch, usagef("invalid epic id %q (e.g. %s)", s.Epic, exampleName(s.Epic, false))
		}
		epicRel = existingEpicFile(root, s.Epic)
		if epicRel == "" {
			return ch, usagef("no epic %q: create it first with `saga-lsp new epic %s --title …`", s.Epic, s.Epic)
		}
		for _, b := range s.BlockedBy {
			if !store.ValidCanonical(b) {
				return ch, usagef("invalid story name %q in --blocked-by", b)
			}
		}
	} else if len(s.BlockedBy) > 0 {
		return ch, usagef("--blocked-by for a story needs --epic: the order between stories lives in the epic")
	}
	rel := store.StoryFileRel(s.Name)
	doc := store.StoryDoc{ID: s.Name, Title: s.Title, Description: s.Description}
	if err := createDoc(p, root, rel, doc); err != nil {
		return ch, err
	}
	ch.Created = append(ch.Created, rel)
	if s.Epic == "" {
		return ch, nil
	}
	child := store.ChildDoc{ID: s.Name, BlockedBy: nonNil(s.BlockedBy)}
	if err := addEpicChild(ctx, p, root, epicRel, s.Epic, child); err != nil {
		return ch, fmt.Errorf("story created at %s, but adding it to epic %s failed: %w", rel, s.Epic, err)
	}
	ch.Updated = append(ch.Updated, epicRel)
	return ch, nil
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
}

// CreateTask writes .saga/stories/<story>/<id>.json.
func CreateTask(ctx context.Context, p *store.Parser, root string, t NewTask) (Changes, error) {
	var ch Changes
	if !store.ValidCanonical(t.Story) {
		return ch, usagef("invalid story name %q", t.Story)
	}
	if !store.ValidID(t.ID) {
		return ch, usagef("invalid task id %q: use lowercase letters, digits and single dashes (e.g. %s)", t.ID, exampleName(t.ID, false))
	}
	if err := store.CheckNameLength("task id", t.ID); err != nil {
		return ch, &UsageError{Msg: err.Error()}
	}
	if strings.TrimSpace(t.Subject) == "" {
		return ch, usagef("a task needs a subject: --subject \"…\"")
	}
	if t.Priority != "" && !slices.Contains([]string{"critical", "high", "medium", "low"}, t.Priority) {
		return ch, usagef("invalid priority %q: use critical, high, medium or low", t.Priority)
	}
	dir := filepath.Join(root, filepath.FromSlash(store.StoryDirRel(t.Story)))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ch, usagef("no story %q: create it first with `saga-lsp new story %s --title …`", t.Story, t.Story)
	}
	for _, b := range t.BlockedBy {
		if !store.ValidID(b) {
			return ch, usagef("invalid task id %q in --blocked-by", b)
		}
		if b == t.ID {
			return ch, usagef("task %q cannot be blocked by itself", t.ID)
		}
		if _, err := os.Stat(filepath.Join(dir, b+".json")); err != nil {
			return ch, usagef("--blocked-by %s: no task %q in story %s", b, b, t.Story)
		}
	}
	rel := store.TaskFileRel(t.Story, t.ID)
	doc := store.TaskDoc{ID: t.ID, Subject: t.Subject, Description: t.Description, ActiveForm: t.ActiveForm,
		Status: store.StatusPending, BlockedBy: nonNil(t.BlockedBy), Priority: t.Priority, Guidance: t.Guidance, DoneWhen: t.DoneWhen}
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

// CreateEpic writes .saga/epics/<id>/epic.json with no children.
func CreateEpic(ctx context.Context, p *store.Parser, root string, e NewEpic) (Changes, error) {
	var ch Changes
	if !store.ValidID(e.ID) {
		return ch, usagef("invalid epic id %q: use lowercase letters, digits and single dashes (e.g. %s)", e.ID, exampleName(e.ID, false))
	}
	if err := store.CheckNameLength("epic id", e.ID); err != nil {
		return ch, &UsageError{Msg: err.Error()}
	}
	if strings.TrimSpace(e.Title) == "" {
		return ch, usagef("an epic needs a title: --title \"…\"")
	}
	if rel := existingEpicFile(root, e.ID); rel != "" {
		return ch, fmt.Errorf("epic %q already exists at %s; nothing was written: %w", e.ID, rel, fs.ErrExist)
	}
	rel := store.EpicFileRel(e.ID)
	doc := store.EpicDoc{ID: e.ID, Title: e.Title, Description: e.Description, Children: []store.ChildDoc{}}
	if err := createDoc(p, root, rel, doc); err != nil {
		return ch, err
	}
	ch.Created = append(ch.Created, rel)
	return ch, nil
}

// existingEpicFile finds an epic in either dialect.
func existingEpicFile(root, id string) string {
	for _, rel := range []string{store.EpicFileRel(id), ".saga/epics/" + id + ".json"} {
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
	if err := validate(p, rel, data); err != nil {
		return err
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", rel, err)
	}
	if err := store.CreateFileAtomic(abs, data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; nothing was written (pick another name or edit the file): %w", rel, fs.ErrExist)
		}
		return err
	}
	return nil
}

// validate refuses bytes that would have error diagnostics of their own.
func validate(p *store.Parser, rel string, data []byte) error {
	f := p.Parse(rel, data, -1)
	for _, d := range f.Local {
		if d.Severity == store.SeverityError {
			return usagef("%s would be invalid (%s: %s); nothing was written", rel, d.Code, d.Message)
		}
	}
	return nil
}

// addEpicChild appends a child to the epic under the epic's lock, editing
// only the children array.
func addEpicChild(ctx context.Context, p *store.Parser, root, epicRel, epic string, child store.ChildDoc) error {
	lock, err := store.AcquireLock(ctx, root, "epic-"+epic)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	abs := filepath.Join(root, filepath.FromSlash(epicRel))
	return store.UpdateFile(abs, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("%s disappeared", epicRel)
		}
		cur := p.Parse(epicRel, old, -1)
		if cur.Epic != nil && cur.Epic.Child(child.ID) != nil {
			return old, nil // already listed: nothing to do
		}
		elem, err := store.MarshalIndent(child)
		if err != nil {
			return nil, err
		}
		data, err := store.AppendElement(old, "/children", strings.TrimSuffix(string(elem), "\n"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", epicRel, err)
		}
		if err := validate(p, epicRel, data); err != nil {
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

func exampleName(s string, canonical bool) string {
	if ex := store.Slugify(s, canonical); ex != "" {
		return ex
	}
	return "write-tests"
}
