package lsp

// check-failed (docs/worker.md#verified-completion): the LSP-only diagnostic of a task whose
// last check result (a check.end of the story's last run: the
// TaskCompleted hook's or the worker's final re-run) failed. It sits on the
// failing command in the task's "checks", with the command's output
// excerpt, in the main copy and the worktree copy.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// checkExcerptLines bounds the output shown in the diagnostic.
const checkExcerptLines = 12

// lastCheck is a task's last check result in its story's newest run (the
// running one, else the last seen).
func lastCheck(st *watch.State, story, task string) (runs.CheckResult, bool) {
	ss := st.Story(story)
	if ss == nil || ss.Run == nil {
		return runs.CheckResult{}, false
	}
	c, ok := ss.Run.Checks[task]
	return c, ok
}

// checkFailed is the check-failed diagnostic of a task file, if any. A file
// without "checks" gets none: the result is about checks it no longer has.
func checkFailed(st *watch.State, rel string, f *store.File, story string) []store.Diagnostic {
	obj := f.Root()
	if f.Kind != store.KindTask || obj == nil {
		return nil
	}
	c, ok := lastCheck(st, story, f.Name)
	arr := obj.Member("checks")
	if !ok || c.Passed || arr == nil || arr.Value == nil {
		return nil
	}
	start, end := arr.Key.Start(), arr.Key.End()
	for _, e := range arr.Value.Elems() {
		if e != nil && e.Str() == c.Command {
			start, end = e.Start(), e.End()
			break
		}
	}
	msg := fmt.Sprintf("task %s's check failed in the last run: %s", f.Name, c.Command)
	if out := excerpt(c.Message, checkExcerptLines); out != "" {
		msg += "\n" + out
	}
	return []store.Diagnostic{liveDiagnostic(rel, f, start, end, store.CodeCheckFailed, msg)}
}

// failedCheckFiles lists the files of the tasks whose last check failed, in
// both copies of their story.
func failedCheckFiles(snap *Snapshot, st *watch.State) map[string]*store.File {
	out := map[string]*store.File{}
	for _, id := range slices.Sorted(maps.Keys(st.Stories)) {
		ss := st.Stories[id]
		if ss.Run == nil {
			continue
		}
		for _, task := range slices.Sorted(maps.Keys(ss.Run.Checks)) {
			if ss.Run.Checks[task].Passed {
				continue
			}
			if s := snap.WS.Copies(id).Main; s != nil {
				if t := s.Task(task); t != nil && t.File != nil {
					out[t.File.Rel] = t.File
				}
			}
			if ss.Worktree != nil {
				rel := store.WorktreeStoryDirRel(id) + "/" + task + ".json"
				if f := ss.Worktree.Files[rel]; f != nil {
					out[rel] = f
				}
			}
		}
	}
	return out
}

// excerpt is the last n lines of s.
func excerpt(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
