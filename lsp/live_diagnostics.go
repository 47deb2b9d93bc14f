package lsp

// The LSP-only diagnostics of runs: stale-task (a task in_progress with no
// worker alive), story-blocked (the live journal ends in a blocker),
// story-held on an epic's child entries (live_epic.go) and check-failed
// (check_failed.go). They are computed from the snapshot and the watcher's
// State alone — no lock, no I/O, no parse — since the publisher runs them
// on the keystroke path.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// diagnostics returns the LSP-only diagnostics of one file: a task of the
// main copy or a file of a worktree copy (the open buffer when there is
// one).
func (l *live) diagnostics(snap *Snapshot, rel string) []store.Diagnostic {
	st := l.state()
	if st == nil || !st.Ready {
		return nil
	}
	if story, _, ok := isWorktreeRel(rel); ok {
		ss := st.Story(story)
		if ss == nil {
			return nil
		}
		f := worktreeFile(snap, ss, rel)
		if f == nil {
			return nil
		}
		return slices.Concat(fileDiagnostics(st, rel, f, story, worktreeJournal(ss), "the worktree copy"), checkFailed(st, rel, f, story), protectedChanged(st, rel, f, story))
	}
	kind, owner, _ := store.Classify(rel)
	if kind == store.KindEpic {
		if f := snap.WS.File(rel); f != nil {
			return epicDiagnostics(st, rel, f)
		}
		return nil
	}
	if kind != store.KindTask && kind != store.KindStory {
		return nil
	}
	f := snap.WS.File(rel)
	if f == nil {
		return nil
	}
	return slices.Concat(fileDiagnostics(st, rel, f, owner, liveJournal(snap, st, owner), ""), checkFailed(st, rel, f, owner), protectedChanged(st, rel, f, owner))
}

// allDiagnostics returns every file's LSP-only diagnostics.
func (l *live) allDiagnostics(snap *Snapshot) []store.Diagnostic {
	st := l.state()
	if st == nil || !st.Ready {
		return nil
	}
	var out []store.Diagnostic
	for _, id := range snap.WS.SortedStoryIDs() {
		s := snap.WS.Story(id)
		if s.File != nil {
			out = append(out, fileDiagnostics(st, s.File.Rel, s.File, id, liveJournal(snap, st, id), "")...)
		}
		for _, t := range s.Tasks {
			if t.Status == store.StatusInProgress && t.File != nil {
				out = append(out, fileDiagnostics(st, t.File.Rel, t.File, id, watch.Journal{}, "")...)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.Stories)) {
		ss := st.Stories[id]
		if ss.Worktree == nil {
			continue
		}
		for _, rel := range slices.Sorted(maps.Keys(ss.Worktree.Files)) {
			f := worktreeFile(snap, ss, rel)
			out = append(out, fileDiagnostics(st, rel, f, id, worktreeJournal(ss), "the worktree copy")...)
		}
	}
	failed := failedCheckFiles(snap, st)
	for _, rel := range slices.Sorted(maps.Keys(failed)) {
		f := failed[rel]
		if _, _, ok := isWorktreeRel(rel); ok {
			if d := snap.DocByRel(rel); d != nil && d.File != nil {
				f = d.File
			}
		}
		out = append(out, checkFailed(st, rel, f, f.Owner)...)
	}
	changed := protectedFiles(snap, st)
	for _, rel := range slices.Sorted(maps.Keys(changed)) {
		f := changed[rel]
		if _, _, ok := isWorktreeRel(rel); ok {
			if d := snap.DocByRel(rel); d != nil && d.File != nil {
				f = d.File
			}
		}
		out = append(out, protectedChanged(st, rel, f, f.Owner)...)
	}
	return append(out, epicFileDiagnostics(snap, st)...)
}

// worktreeFile is a worktree copy's file as the watcher read it, or the
// open buffer's (parsed by text_sync, under its worktree rel: the same
// kind, owner and name as the watcher's parse under the main rel).
func worktreeFile(snap *Snapshot, ss *watch.Story, rel string) *store.File {
	if d := snap.DocByRel(rel); d != nil && d.File != nil {
		return d.File
	}
	if ss.Worktree == nil {
		return nil
	}
	return ss.Worktree.Files[rel]
}

// worktreeJournal is the worktree copy's journal (none without a copy).
func worktreeJournal(ss *watch.Story) watch.Journal {
	if ss.Worktree == nil {
		return watch.Journal{}
	}
	return ss.Worktree.Journal
}

// liveJournal is the journal that decides story-blocked on the main
// story.json: the worktree copy's while the story has one (a running or
// unmerged worker writes there), else the main copy's.
func liveJournal(snap *Snapshot, st *watch.State, story string) watch.Journal {
	if ss := st.Story(story); ss != nil && ss.Worktree != nil {
		j := ss.Worktree.Journal
		if j.Blocked {
			j.Text = "(worktree journal) " + j.Text
		}
		return j
	}
	if s := snap.WS.Story(story); s == nil || s.Journal == nil {
		return watch.Journal{}
	}
	return st.MainJournal(story)
}

// fileDiagnostics checks one parsed file: stale-task on a task's status,
// story-blocked on story.json's id. where names the copy in messages.
func fileDiagnostics(st *watch.State, rel string, f *store.File, story string, journal watch.Journal, where string) []store.Diagnostic {
	obj := f.Root()
	if obj == nil {
		return nil
	}
	in := ""
	if where != "" {
		in = " in " + where
	}
	switch {
	case f.Kind == store.KindTask && f.Task != nil && f.Task.Status == store.StatusInProgress:
		if st.Alive(story) {
			return nil
		}
		n := obj.Get("status")
		if n == nil {
			return nil
		}
		msg := fmt.Sprintf("task %s is in_progress%s, but no worker is running story %s: a worker stopped without finishing it. Run the story again (the worker resets it to pending) or set the status yourself",
			f.Name, in, story)
		return []store.Diagnostic{liveDiagnostic(rel, f, n.Start(), n.End(), store.CodeStaleTask, msg)}
	case f.Kind == store.KindStory && journal.Blocked:
		n := obj.Get("id")
		start, end := obj.Start(), obj.Start()+1
		if n != nil {
			start, end = n.Start(), n.End()
		}
		text := journal.Text
		if text == "" {
			text = "a blocker was recorded"
		}
		msg := fmt.Sprintf("story %s is blocked%s: %s — resolve it, add a \"## <time> resolution\" entry to journal.md, then run the story again",
			story, in, text)
		return []store.Diagnostic{liveDiagnostic(rel, f, start, end, store.CodeStoryBlocked, msg)}
	}
	return nil
}

func liveDiagnostic(rel string, f *store.File, start, end int, code store.Code, msg string) store.Diagnostic {
	return store.Diagnostic{File: rel, Range: store.SpanRange(f.Doc, start, end), Start: start, End: end,
		Severity: store.SeverityOf(code), Code: code, Message: msg}
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
