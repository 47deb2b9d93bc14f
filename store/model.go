package store

import (
	"path"
	"strings"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Statuses of stories, epics and tasks.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// FileKind says what a file under .saga/ is.
type FileKind int

const (
	KindOther   FileKind = iota
	KindStory            // .saga/stories/<story>/story.json
	KindTask             // .saga/stories/<story>/<task>.json
	KindEpic             // .saga/epics/<epic>/epic.json or .saga/epics/<epic>.json
	KindJournal          // .saga/stories/<story>/journal.md
)

func (k FileKind) String() string {
	switch k {
	case KindStory:
		return "story"
	case KindTask:
		return "task"
	case KindEpic:
		return "epic"
	case KindJournal:
		return "journal"
	}
	return "other"
}

// Classify tells what the file at rel (slash-separated, relative to the
// workspace root) is, and the story or epic it belongs to. Worktrees and
// anything outside the story/epic layout are KindOther.
func Classify(rel string) (kind FileKind, owner, name string) {
	rest, ok := strings.CutPrefix(rel, ".saga/")
	if !ok {
		return KindOther, "", ""
	}
	dir, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return KindOther, "", ""
	}
	first, file, nested := strings.Cut(rest, "/")
	switch {
	case dir == "stories" && nested && !strings.Contains(file, "/"):
		owner, name = first, file
		switch {
		case name == "story.json":
			return KindStory, owner, owner
		case name == "journal.md":
			return KindJournal, owner, owner
		case isTaskFileName(name):
			return KindTask, owner, strings.TrimSuffix(name, ".json")
		}
	case dir == "epics" && nested && file == "epic.json":
		return KindEpic, first, first
	case dir == "epics" && !nested && isTaskFileName(first):
		id := strings.TrimSuffix(first, ".json")
		return KindEpic, id, id
	}
	return KindOther, "", ""
}

// isTaskFileName: every *.json but story.json, skipping hidden files such as
// the temp files of an interrupted atomic write.
func isTaskFileName(name string) bool {
	return strings.HasSuffix(name, ".json") && len(name) > len(".json") &&
		name != "story.json" && !strings.HasPrefix(name, ".")
}

// StoryFileRel, TaskFileRel and EpicFileRel give the canonical locations.
func StoryFileRel(story string) string { return path.Join(".saga/stories", story, "story.json") }
func TaskFileRel(story, task string) string {
	return path.Join(".saga/stories", story, task+".json")
}
func EpicFileRel(epic string) string     { return path.Join(".saga/epics", epic, "epic.json") }
func StoryDirRel(story string) string    { return path.Join(".saga/stories", story) }
func JournalFileRel(story string) string { return path.Join(".saga/stories", story, "journal.md") }

// Ref is a reference to another task or story by id, with the JSON string
// node that holds it (nil when it came from elsewhere).
type Ref struct {
	ID   string
	Node *jsonc.Node
}

// File is one parsed .saga JSON file. It is immutable once built: a change to
// the text builds a new File, so snapshots can share the unchanged ones.
type File struct {
	Rel     string // slash-separated, relative to the workspace root
	Kind    FileKind
	Owner   string // story (task/story files) or epic id the file belongs to
	Name    string // the name its id must equal: task file base, story folder, epic folder/file base
	Version int32  // editor version of an overlay; -1 for a file read from disk
	Src     []byte
	Doc     *jsonc.Document // nil when the file could not be read
	ReadErr string          // why the file could not be read, with what to do

	// Local holds the diagnostics the file has on its own (syntax, schema,
	// names); cross-file findings are computed by the Workspace.
	Local []Diagnostic

	Task  *Task  // KindTask
	Story *Story // KindStory: the fields of story.json (Tasks unset here)
	Epic  *Epic  // KindEpic
}

// Root is the document's top-level object, or nil.
func (f *File) Root() *jsonc.Node {
	if f == nil || f.Doc == nil || f.Doc.Root == nil || f.Doc.Root.Kind != jsonc.Object {
		return nil
	}
	return f.Doc.Root
}

// Task is a task file's content. Its identity is the file's base name (what
// hydration and blockedBy use); IDValue is what the file says.
type Task struct {
	ID          string
	IDValue     string
	Subject     string
	Description string
	ActiveForm  string
	Status      string
	Priority    string
	Guidance    string
	DoneWhen    string
	BlockedBy   []Ref
	File        *File
}

// Story is story.json's content plus, in a Workspace, its task files.
type Story struct {
	ID          string // the folder name: the canonical name
	IDValue     string
	Title       string
	Description string
	Guidance    string
	DoneWhen    string
	Avoid       string
	Status      string
	Epic        string // the `epic` field
	EpicNode    *jsonc.Node
	Branch      string
	PR          string
	Worktree    string
	File        *File // story.json; nil when the folder has none

	Tasks   []*Task // sorted by id; set by the Workspace
	Journal *File   // journal.md when present (not parsed: it is Markdown)
}

// EpicID returns the epic the story belongs to: its `epic` field, else the
// prefix of its canonical name.
func (s *Story) EpicID() string {
	if s.Epic != "" {
		return s.Epic
	}
	return EpicOf(s.ID)
}

// Done counts completed tasks.
func (s *Story) Done() int {
	n := 0
	for _, t := range s.Tasks {
		if t.Status == StatusCompleted {
			n++
		}
	}
	return n
}

// Task finds a task by id.
func (s *Story) Task(id string) *Task {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Epic is an epic file's content.
type Epic struct {
	ID          string // folder (or file) name
	IDValue     string
	Title       string
	Description string
	Status      string
	Children    []Child
	File        *File
}

// Child is one entry of an epic's children.
type Child struct {
	ID        string
	Node      *jsonc.Node // the id string
	Object    *jsonc.Node // the child object
	BlockedBy []Ref
}

// Child finds a child entry by story id.
func (e *Epic) Child(id string) *Child {
	for i := range e.Children {
		if e.Children[i].ID == id {
			return &e.Children[i]
		}
	}
	return nil
}
