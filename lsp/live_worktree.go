package lsp

// Worktree copies: the story files a running (or unmerged) worker and its
// hooks write in the story's worktree, and their journals.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// liveStory is what the server knows of one story beyond its main copy.
type liveStory struct {
	id      string
	base    map[string]string // statuses of the main copy, used while there is no worktree copy
	subject map[string]string
	wt      map[string]string      // statuses of the worktree copy; nil when there is none
	wtFiles map[string]*store.File // worktree copy files by root-relative rel
	wtBlock journalState           // the worktree copy's journal
	view    map[string]string      // the statuses shown: worktree (or main) merged with a running worker's sources
}

// journalState is what a journal.md says: blocked and the blocker's text.
type journalState struct {
	blocked bool
	text    string
	size    int64
	mtime   time.Time
}

// loadWorktree reads a story's worktree copy and reports what changed.
func (l *live) loadWorktree(snap *Snapshot, id string, initial bool, ef *effects) {
	if !store.ValidCanonical(id) {
		return
	}
	wtRoot := store.WorktreeDir(l.root, id)
	storyDir := filepath.Join(wtRoot, ".saga", "stories", id)
	for _, d := range []string{wtRoot, filepath.Join(wtRoot, ".saga"), filepath.Join(wtRoot, ".saga", "stories"), storyDir} {
		if !l.watchLocked(d) {
			break
		}
	}
	st := l.stories[id]
	fi, err := os.Stat(storyDir)
	if err != nil || !fi.IsDir() {
		if st == nil || st.wt == nil {
			return
		}
		// The worktree went away (removed after a merge).
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
		st.wt, st.wtFiles, st.wtBlock = nil, nil, journalState{}
		l.restatus(st, runs.SourceWorktree, ef)
		return
	}
	if st == nil {
		st = l.ensureStory(snap, id)
	}
	s, err := l.s.parser.LoadStory(wtRoot, id)
	if err != nil {
		return
	}
	prefix := store.WorktreesRel + "/" + id + "/"
	files := map[string]*store.File{}
	wt := map[string]string{}
	for _, f := range s.StoryFiles() {
		files[prefix+f.Rel] = f
	}
	for _, t := range s.Tasks {
		wt[t.ID] = symbolStatus(t.Status)
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
	if block.blocked != st.wtBlock.blocked || block.text != st.wtBlock.text {
		ef.rels[prefix+store.StoryFileRel(id)] = true
		ef.rels[store.StoryFileRel(id)] = true
		ef.refresh = true
	}
	st.wt, st.wtFiles, st.wtBlock = wt, files, block
	source := runs.SourceWorktree
	if l.activeRun(id) != nil {
		source = runs.SourceHook
	}
	if initial {
		st.view = l.computeView(st)
		return
	}
	l.restatus(st, source, ef)
	if r := l.activeRun(id); r != nil {
		l.progressUpdate(r, ef)
	}
}

// readJournal reads a journal.md's blocker state ("" when none).
func readJournal(path string) journalState {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > store.MaxFileSize {
		return journalState{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return journalState{}
	}
	blocked, text, _ := store.JournalBlocker(data)
	return journalState{blocked: blocked, text: text, size: fi.Size(), mtime: fi.ModTime()}
}

// mainJournal reads the main copy's journal, cached by size and time.
func (l *live) mainJournal(id string) journalState {
	path := filepath.Join(l.root, filepath.FromSlash(store.JournalFileRel(id)))
	fi, err := os.Stat(path)
	if err != nil {
		delete(l.journals, id)
		return journalState{}
	}
	if c, ok := l.journals[id]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c
	}
	j := readJournal(path)
	l.journals[id] = j
	return j
}

// isWorktreeRel tells whether rel is a file of a story's worktree copy
// (<worktrees>/<story>/.saga/stories/<story>/<file>); it returns the
// story and the main copy's rel of the same file.
func isWorktreeRel(rel string) (story, mainRel string, ok bool) {
	rest, ok := strings.CutPrefix(rel, store.WorktreesRel+"/")
	if !ok {
		return "", "", false
	}
	story, inner, ok := strings.Cut(rest, "/")
	if !ok || !store.ValidCanonical(story) {
		return "", "", false
	}
	kind, owner, _ := store.Classify(inner)
	if owner != story || (kind != store.KindTask && kind != store.KindStory) {
		return "", "", false
	}
	return story, inner, true
}
