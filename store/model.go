package store

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/schema"
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
	// KindMisplaced is a file or folder where SAGA never reads anything: a
	// JSON file directly in .saga/stories/, a folder .saga/story/ or
	// .saga/epic/. It carries one misplaced-file warning.
	KindMisplaced
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
	case KindMisplaced:
		return "misplaced"
	}
	return "other"
}

// Schema is the schema a story, task or epic file follows; false for other
// files.
func (k FileKind) Schema() (schema.Kind, bool) {
	switch k {
	case KindStory, KindTask, KindEpic:
		return schema.Kind(k.String()), true
	}
	return "", false
}

// Classify tells what the file at rel (slash-separated, relative to the
// workspace root) is, and the story or epic it belongs to. A story's
// worktree copy (.saga/worktrees/<story>/.saga/stories/<story>/…, the folder
// upstream SAGA reads) classifies like the main copy; anything else under a
// worktree, and anything outside the story/epic layout, is KindOther.
func Classify(rel string) (kind FileKind, owner, name string) {
	if story, inner, ok := SplitWorktreeRel(rel); ok {
		kind, owner, name = classifyMain(inner)
		if owner != story || (kind != KindStory && kind != KindTask && kind != KindJournal) {
			return KindOther, "", ""
		}
		return kind, owner, name
	}
	return classifyMain(rel)
}

func classifyMain(rel string) (kind FileKind, owner, name string) {
	rest, ok := strings.CutPrefix(rel, ".saga/")
	if !ok {
		return KindOther, "", ""
	}
	dir, rest, ok := strings.Cut(rest, "/")
	if !ok {
		if dir == "story" || dir == "epic" {
			return KindMisplaced, "", dir
		}
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
	case dir == "stories" && !nested && isTaskFileName(first):
		return KindMisplaced, "", strings.TrimSuffix(first, ".json")
	case dir == "epics" && nested && file == "epic.json":
		return KindEpic, first, first
	case dir == "epics" && !nested && isTaskFileName(first):
		id := strings.TrimSuffix(first, ".json")
		return KindEpic, id, id
	}
	return KindOther, "", ""
}

// SplitWorktreeRel recognises a path inside a story's worktree copy,
// .saga/worktrees/<story>/.saga/stories/<story>/<file>: it returns the story
// and the path the same file has in the main copy. Other paths under
// .saga/worktrees/ (the rest of the worktree's checkout) are not copies.
func SplitWorktreeRel(rel string) (story, mainRel string, ok bool) {
	rest, ok := strings.CutPrefix(rel, WorktreesRel+"/")
	if !ok {
		return "", "", false
	}
	story, inner, ok := strings.Cut(rest, "/")
	if !ok || !strings.HasPrefix(inner, ".saga/stories/"+story+"/") {
		return "", "", false
	}
	return story, inner, true
}

// isTaskFileName: every *.json but story.json, skipping hidden files such as
// the temp files of an interrupted atomic write.
func isTaskFileName(name string) bool {
	return strings.HasSuffix(name, ".json") && len(name) > len(".json") &&
		name != "story.json" && !strings.HasPrefix(name, ".")
}

// ReservedTaskID tells whether a task may not take id: the names the
// format keeps for a story folder's own files (story.json, journal.md) and
// for an epic's (epic.json). This is the one list: `new task`, the server's
// rename and its "Create task" fixes all refuse these, so no task file ever
// lands on — or is renamed over — one of them.
func ReservedTaskID(id string) bool {
	switch id {
	case "story", "epic", "journal":
		return true
	}
	return false
}

// ReservedTaskIDProblem says why id is reserved and what to do.
func ReservedTaskIDProblem(what, id string) string {
	return fmt.Sprintf("%s %q is reserved: story, epic and journal name a story's or an epic's own files; pick another name (e.g. %s-task)", what, id, id)
}

// StoryFileRel, TaskFileRel and EpicFileRel give the canonical locations.
func StoryFileRel(story string) string { return path.Join(".saga/stories", story, "story.json") }
func TaskFileRel(story, task string) string {
	return path.Join(".saga/stories", story, task+".json")
}
func EpicFileRel(epic string) string     { return path.Join(".saga/epics", epic, "epic.json") }
func StoryDirRel(story string) string    { return path.Join(".saga/stories", story) }
func JournalFileRel(story string) string { return path.Join(".saga/stories", story, "journal.md") }

// SingleEpicFileRel is the single-file dialect's epic location (upstream SAGA's).
func SingleEpicFileRel(epic string) string { return ".saga/epics/" + epic + ".json" }

// WorktreesRel is the folder of story worktrees, relative to the root.
const WorktreesRel = ".saga/worktrees"

// WorktreeDirRel is the story's git worktree; WorktreeStoryDirRel its copy of
// the story's folder, where upstream SAGA and the worker keep live statuses.
func WorktreeDirRel(story string) string { return path.Join(WorktreesRel, story) }
func WorktreeStoryDirRel(story string) string {
	return path.Join(WorktreesRel, story, StoryDirRel(story))
}

// WorktreeDir is a story's worktree: <root>/.saga/worktrees/<story>.
func WorktreeDir(root, story string) string {
	return filepath.Join(root, filepath.FromSlash(WorktreeDirRel(story)))
}

// DrySuffix ends the folder of a story's dry-run worktree,
// .saga/worktrees/<story>.dry. No id has a dot (ValidID), so it is never a
// story's worktree: the loader, and so every real run, `plan` and the
// editor's model, never read its copy as the story's.
const DrySuffix = ".dry"

// DryWorktreeDirRel is the worktree of a story's dry run, relative to the
// root.
func DryWorktreeDirRel(story string) string { return path.Join(WorktreesRel, story+DrySuffix) }

// DryWorktreeDir is a story's dry-run worktree: <root>/.saga/worktrees/<story>.dry.
func DryWorktreeDir(root, story string) string {
	return filepath.Join(root, filepath.FromSlash(DryWorktreeDirRel(story)))
}

// RunWorktreeDir is the worktree a run of the story works in: DryWorktreeDir
// for a dry run, else WorktreeDir.
func RunWorktreeDir(root, story string, dry bool) string {
	if dry {
		return DryWorktreeDir(root, story)
	}
	return WorktreeDir(root, story)
}

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
	// Checks and CheckTimeout are the file's own checks (TaskChecks); the
	// ones that count at run time are read from git (package checks).
	Checks       []Check
	CheckTimeout time.Duration
	// Paths are the globs of the files the task expects to touch
	// (TaskPaths): what the epic runner and the editor foresee conflicts
	// from (docs/landing.md#conflicts-foreseen).
	Paths []Glob
	// Review is where a review task came from; nil for every other task
	// (docs/review.md).
	Review *ReviewSource
	File   *File
}

// ReviewSource is a review task's origin, written by saga-lsp (never the
// agent): the thread, review or comment it answers, keyed by Key so that
// one thread is one task however often it is read (docs/review.md).
type ReviewSource struct {
	// Key is the thread's, review's or comment's GitHub node id, or an
	// editor comment's own id.
	Key string `json:"key"`
	// Kind says what Key names: thread, review, comment or editor.
	Kind string `json:"kind"`
	URL  string `json:"url,omitempty"`
	// Authors are the writers whose words the task holds, in order.
	Authors []string `json:"authors,omitempty"`
	Path    string   `json:"path,omitempty"`
	Line    int      `json:"line,omitempty"`
	// UpdatedAt is the newest counted comment's updatedAt: a later one is
	// a new revision of the task.
	UpdatedAt string `json:"updatedAt,omitempty"`
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

	// Dir is the folder this copy of the story was read from, relative to
	// the root: .saga/stories/<id>, or WorktreeStoryDirRel(id) for the copy in
	// the story's worktree (InWorktree).
	Dir        string
	InWorktree bool

	index *taskIndex // task id → position in Tasks, for large stories (see reindex)
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

// Flat tells whether the epic is in upstream SAGA's dialect: a single file
// .saga/epics/<id>.json none of whose children carries the seeds'
// "<epic>--" prefix. Its children are flat story ids, each story naming the
// epic in its own "epic" field.
func (e *Epic) Flat() bool {
	if e.File == nil || !strings.HasSuffix(e.File.Rel, "/"+e.ID+".json") {
		return false
	}
	for _, c := range e.Children {
		if strings.HasPrefix(c.ID, e.ID+"--") {
			return false
		}
	}
	return true
}

// NewChild says how a story created in this epic under name is written in
// the epic's dialect: its canonical name, and the value of its "epic"
// field ("" when the name's prefix says it). A name the epic already lists
// is kept as it is, so creating a listed-but-missing story resolves
// unknown-story instead of making a second, differently named story.
func (e *Epic) NewChild(name string) (story, epicField string) {
	prefixed := strings.HasPrefix(name, e.ID+"--")
	switch {
	case prefixed:
		return name, ""
	case e.Child(name) != nil || e.Flat():
		return name, e.ID
	}
	return e.ID + "--" + name, ""
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
