package lsp

// The LSP-only diagnostics of runs: stale-task (a task in_progress with no
// worker alive), story-blocked (the journal ends in a blocker),
// story-held on an epic's child entries (live_epic_state.go) and
// check-failed (check_failed.go).

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// aliveLocked tells whether a worker of the story is alive: a followed run
// that has not ended, or a holder of the story's worker lock (a worker
// whose events this server cannot see).
func (l *live) aliveLocked(story string) bool {
	if l.activeRun(story) != nil {
		return true
	}
	return l.lockAliveLocked(story)
}

func (l *live) lockAliveLocked(story string) bool {
	if c, ok := l.locks[story]; ok && time.Since(c.at) < liveLockTTL {
		return c.pid > 0
	}
	pid, err := runs.WorkerHolder(l.root, story)
	if err != nil {
		pid = 0
	}
	l.locks[story] = lockCheck{pid: pid, at: time.Now()}
	return pid > 0
}

// storyRels queues the story's files (main copy and worktree copy) for
// republication: their LSP-only diagnostics depend on the worker.
func (l *live) storyRels(snap *Snapshot, story string, ef *effects) {
	copies := snap.WS.Copies(story)
	for _, s := range []*store.Story{copies.Main, copies.Worktree} {
		if s == nil {
			continue
		}
		for _, f := range s.StoryFiles() {
			ef.rels[f.Rel] = true
		}
	}
	ef.rels[store.StoryFileRel(story)] = true
	if st := l.stories[story]; st != nil {
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
	}
}

// diagnostics returns the LSP-only diagnostics of one file: a task of the
// main copy or a file of a worktree copy (the open buffer when there is
// one).
func (l *live) diagnostics(snap *Snapshot, rel string) []store.Diagnostic {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.scanned || l.closed {
		return nil
	}
	if story, mainRel, ok := isWorktreeRel(rel); ok {
		st := l.stories[story]
		if st == nil {
			return nil
		}
		f := st.wtFiles[rel]
		if d := snap.DocByRel(rel); d != nil {
			f = l.s.parser.Parse(mainRel, d.Text, d.Version)
		}
		if f == nil {
			return nil
		}
		return append(l.fileDiagnostics(rel, f, story, st.wtBlock, "the worktree copy"), l.checkFailed(rel, f, story)...)
	}
	kind, owner, _ := store.Classify(rel)
	if kind == store.KindEpic {
		if f := snap.WS.File(rel); f != nil {
			return l.epicDiagnosticsLocked(rel, f)
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
	return append(l.fileDiagnostics(rel, f, owner, l.liveJournal(snap, owner), ""), l.checkFailed(rel, f, owner)...)
}

// allDiagnostics returns every file's LSP-only diagnostics.
func (l *live) allDiagnostics(snap *Snapshot) []store.Diagnostic {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.scanned || l.closed {
		return nil
	}
	var out []store.Diagnostic
	for _, id := range snap.WS.SortedStoryIDs() {
		s := snap.WS.Story(id)
		if s.File != nil {
			out = append(out, l.fileDiagnostics(s.File.Rel, s.File, id, l.liveJournal(snap, id), "")...)
		}
		for _, t := range s.Tasks {
			if t.Status == store.StatusInProgress && t.File != nil {
				out = append(out, l.fileDiagnostics(t.File.Rel, t.File, id, journalState{}, "")...)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(l.stories)) {
		st := l.stories[id]
		for _, rel := range slices.Sorted(maps.Keys(st.wtFiles)) {
			f := st.wtFiles[rel]
			if d := snap.DocByRel(rel); d != nil {
				_, mainRel, _ := isWorktreeRel(rel)
				f = l.s.parser.Parse(mainRel, d.Text, d.Version)
			}
			out = append(out, l.fileDiagnostics(rel, f, id, st.wtBlock, "the worktree copy")...)
		}
	}
	failed := l.failedCheckFiles(snap)
	for _, rel := range slices.Sorted(maps.Keys(failed)) {
		f := failed[rel]
		if _, mainRel, ok := isWorktreeRel(rel); ok {
			if d := snap.DocByRel(rel); d != nil {
				f = l.s.parser.Parse(mainRel, d.Text, d.Version)
			}
		}
		out = append(out, l.checkFailed(rel, f, f.Owner)...)
	}
	return append(out, l.epicFileDiagnosticsLocked(snap)...)
}

// liveJournal is the journal that decides story-blocked on the main
// story.json: the worktree copy's while the story has one (a running or
// unmerged worker writes there), else the main copy's.
func (l *live) liveJournal(snap *Snapshot, story string) journalState {
	if st := l.stories[story]; st != nil && st.wt != nil {
		j := st.wtBlock
		if j.blocked {
			j.text = "(worktree journal) " + j.text
		}
		return j
	}
	if s := snap.WS.Story(story); s == nil || s.Journal == nil {
		return journalState{}
	}
	return l.mainJournal(story)
}

// fileDiagnostics checks one parsed file: stale-task on a task's status,
// story-blocked on story.json's id. where names the copy in messages.
func (l *live) fileDiagnostics(rel string, f *store.File, story string, journal journalState, where string) []store.Diagnostic {
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
		if l.aliveLocked(story) {
			return nil
		}
		n := obj.Get("status")
		if n == nil {
			return nil
		}
		msg := fmt.Sprintf("task %s is in_progress%s, but no worker is running story %s: a worker stopped without finishing it. Run the story again (the worker resets it to pending) or set the status yourself",
			f.Name, in, story)
		return []store.Diagnostic{liveDiagnostic(rel, f, n.Start, n.End, store.CodeStaleTask, msg)}
	case f.Kind == store.KindStory && journal.blocked:
		n := obj.Get("id")
		start, end := obj.Start, obj.Start+1
		if n != nil {
			start, end = n.Start, n.End
		}
		text := journal.text
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
