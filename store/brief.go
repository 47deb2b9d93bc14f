package store

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// The light reader: what a story or a workspace holds, read with the
// tolerant JSON parser only — no schema, no workspace, no rules — for the
// hook's SessionStart context, which Claude Code waits for at every session
// start (docs/hooks.md#sessionstart-story-context). Files are read as the
// loader reads them (filesafe.ReadWorkspaceFile: regular files, bounded, never
// through a link out of the workspace); a broken one is marked, never fatal.

// StoryBrief is one story folder read lightly.
type StoryBrief struct {
	Title, Status string
	Broken        bool        // story.json unreadable or not clean JSON
	Tasks         []TaskBrief // in CompareTaskIDs order
}

// TaskBrief is one task file read lightly.
type TaskBrief struct {
	ID, Subject, Status string
	BlockedBy           []string
	Broken              bool // unreadable or not clean JSON
}

// ReadStoryBrief reads the folder of story in the workspace at root; an
// error when the folder cannot be listed or leads out of the workspace.
func ReadStoryBrief(root, story string) (*StoryBrief, error) {
	rel := StoryDirRel(story)
	if why := filesafe.OutsideWorkspace(root, rel); why != "" {
		return nil, fmt.Errorf("story %s: %s", story, why)
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("list story %s: %w", story, err)
	}
	b := &StoryBrief{Broken: true}
	if src, why := filesafe.ReadWorkspaceFile(root, rel+"/story.json"); why == "" {
		doc := jsonc.Parse(src)
		b.Broken = len(doc.Errors) > 0
		b.Title, b.Status = briefString(doc.Root, "title"), briefString(doc.Root, "status")
	}
	for _, e := range entries {
		name := e.Name()
		if kind, _, _ := Classify(rel + "/" + name); kind != KindTask || e.IsDir() {
			continue
		}
		t := TaskBrief{ID: strings.TrimSuffix(name, ".json"), Broken: true}
		if src, why := filesafe.ReadWorkspaceFile(root, rel+"/"+name); why == "" {
			doc := jsonc.Parse(src)
			t.Broken = len(doc.Errors) > 0
			t.Subject, t.Status = briefString(doc.Root, "subject"), briefString(doc.Root, "status")
			if arr := doc.Root.Get("blockedBy"); arr != nil && arr.Kind == jsonc.Array {
				for _, el := range arr.Elems() {
					if el.Kind == jsonc.String {
						t.BlockedBy = append(t.BlockedBy, el.Str())
					}
				}
			}
		}
		b.Tasks = append(b.Tasks, t)
	}
	slices.SortFunc(b.Tasks, func(x, y TaskBrief) int { return CompareTaskIDs(x.ID, y.ID) })
	return b, nil
}

// CountItems counts the workspace's stories and epics by listing their
// folders only, so it stays fast on big workspaces.
func CountItems(root string) (stories, epics int) {
	return len(StoryNames(root)), len(EpicNames(root))
}

// StoryNames lists the story folders of the workspace at root, sorted: the
// names a did-you-mean chooses from where no workspace is loaded.
func StoryNames(root string) []string {
	dir := filepath.Join(root, ".saga", "stories")
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") && entryIsDir(dir, de) {
			out = append(out, de.Name())
		}
	}
	return out
}

// EpicNames lists the epics of the workspace at root, sorted: folders with
// an epic.json and single-file epics, each once.
func EpicNames(root string) []string {
	dir := filepath.Join(root, ".saga", "epics")
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		id := ""
		if entryIsDir(dir, de) {
			if _, err := os.Stat(filepath.Join(dir, name, "epic.json")); err == nil {
				id = name
			}
		} else if strings.HasSuffix(name, ".json") {
			id = strings.TrimSuffix(name, ".json")
		}
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func entryIsDir(dir string, de os.DirEntry) bool {
	if de.Type()&os.ModeSymlink == 0 {
		return de.IsDir()
	}
	fi, err := os.Stat(filepath.Join(dir, de.Name()))
	return err == nil && fi.IsDir()
}

func briefString(obj *jsonc.Node, key string) string {
	if v := obj.Get(key); v != nil && v.Kind == jsonc.String {
		return v.Str()
	}
	return ""
}

// CompareTaskIDs is the order tasks are listed in for people and agents:
// digit runs compared as numbers (t2 before t10), then bytes. (Story.Tasks
// is kept in byte order, which its lookups search.)
func CompareTaskIDs(a, b string) int {
	if c := naturalCompare(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRunLen(a), digitRunLen(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitRunLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
