package watch

// Worktree copies (the story files a running or unmerged worker and its
// hooks write in the story's worktree) and journals.

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// story is what the watcher knows of one story beyond its main copy.
type story struct {
	id      string
	base    map[string]string // statuses of the main copy, used while there is no worktree copy
	subject map[string]string
	wt      map[string]string      // statuses of the worktree copy; nil when there is none
	wtFiles map[string]*store.File // worktree copy files by root-relative rel (replaced, never modified)
	wtBlock Journal                // the worktree copy's journal
	view    map[string]string      // the statuses shown (replaced, never modified): see computeView
}

// worktreeDirs lists the story worktrees.
func (w *Watcher) worktreeDirs() []string {
	des, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(store.WorktreesRel)))
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if store.ValidCanonical(de.Name()) {
			if fi, err := os.Stat(store.WorktreeDir(w.root, de.Name())); err == nil && fi.IsDir() {
				out = append(out, de.Name())
			}
		}
	}
	return out
}

// loadWorktree reads a story's worktree copy and reports what changed.
func (w *Watcher) loadWorktree(ws *store.Workspace, id string, initial bool, ef *effects) {
	if !store.ValidCanonical(id) {
		return
	}
	wtRoot := store.WorktreeDir(w.root, id)
	storyDir := filepath.Join(wtRoot, ".saga", "stories", id)
	for _, d := range []string{wtRoot, filepath.Join(wtRoot, ".saga"), filepath.Join(wtRoot, ".saga", "stories"), storyDir} {
		if !w.watchLocked(d) {
			break
		}
	}
	st := w.stories[id]
	fi, err := os.Stat(storyDir)
	if err != nil || !fi.IsDir() {
		if st == nil || st.wt == nil {
			return
		}
		// The worktree went away (removed after a merge).
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
		st.wt, st.wtFiles, st.wtBlock = nil, nil, Journal{}
		w.restatus(st, runs.SourceWorktree, ef)
		return
	}
	if st == nil {
		st = w.ensureStory(ws, id)
	}
	s, err := w.parser.LoadStory(wtRoot, id)
	if err != nil {
		return
	}
	prefix := store.WorktreesRel + "/" + id + "/"
	files := map[string]*store.File{}
	wt := map[string]string{}
	for _, f := range s.StoryFiles() {
		files[prefix+f.Rel] = f
	}
	// subject is modified in place: it never leaves the watcher.
	for _, t := range s.Tasks {
		wt[t.ID] = statusOf(t.Status)
		if t.Subject != "" {
			st.subject[t.ID] = t.Subject
		}
	}
	block := readJournal(filepath.Join(storyDir, "journal.md"))
	for rel, f := range files {
		if old := st.wtFiles[rel]; old == nil || !bytes.Equal(old.Src, f.Src) {
			ef.rels[rel] = true
		}
	}
	for rel := range st.wtFiles {
		if files[rel] == nil {
			ef.rels[rel] = true
		}
	}
	if block != st.wtBlock {
		ef.rels[prefix+store.StoryFileRel(id)] = true
		ef.rels[store.StoryFileRel(id)] = true
		ef.refresh = true
	}
	st.wt, st.wtFiles, st.wtBlock = wt, files, block
	source := runs.SourceWorktree
	if w.activeRun(id) != nil {
		source = runs.SourceHook
	}
	if initial {
		st.view = w.computeView(st)
		return
	}
	w.restatus(st, source, ef)
	if r := w.activeRun(id); r != nil {
		w.progressUpdate(r, ef)
	}
}

// readJournal reads a journal.md's blocker state.
func readJournal(path string) Journal {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > filesafe.MaxFileSize {
		return Journal{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Journal{}
	}
	blocked, text, _ := store.JournalBlocker(data)
	return Journal{Blocked: blocked, Text: text}
}

// mainJournalStories are the stories whose main copy has a journal.
func mainJournalStories(ws *store.Workspace) []string {
	var out []string
	for _, id := range ws.SortedStoryIDs() {
		if m := ws.Copies(id).Main; m != nil && m.Journal != nil {
			out = append(out, id)
		}
	}
	return out
}

// readMainJournals reads the main checkout's journals of these stories.
// Unless initial, the main story.json of each whose blocker changed is
// republished (story-blocked rests on it).
func (w *Watcher) readMainJournals(ids []string, initial bool, ef *effects) {
	var next map[string]Journal
	for _, id := range ids {
		j := Journal{}
		if store.ValidCanonical(id) {
			j = readJournal(filepath.Join(w.root, filepath.FromSlash(store.JournalFileRel(id))))
		}
		if !j.Blocked {
			j = Journal{}
		}
		if j == w.journals[id] {
			continue
		}
		if next == nil {
			next = maps.Clone(w.journals)
		}
		if j.Blocked {
			next[id] = j
		} else {
			delete(next, id)
		}
		if !initial {
			ef.rels[store.StoryFileRel(id)] = true
		}
	}
	if next != nil {
		w.journals = next
	}
}
