package hook

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// sessionStart exports the SAGA variables to $CLAUDE_ENV_FILE and prints a
// summary of the story (or the workspace) as the session's context.
func (h *hookRun) sessionStart(p *HookPayload) {
	cwd := absPathFrom("", h.hookCwd(p))
	sessionDir := runs.SessionDir(h.env)
	var vars [][2]string
	var summary string
	if wt, ok := DetectStoryWorktree(cwd); ok {
		vars = [][2]string{
			{runs.EnvProjectDir, wt.Worktree},
			{runs.EnvTaskContext, runs.TaskContextStoryWorktree},
			{runs.EnvStoryID, wt.Story},
			{runs.EnvStoryPath, wt.Story},
			{runs.EnvSessionDir, sessionDir},
		}
		summary = StorySummary(wt)
	} else {
		project := ""
		root, err := store.FindRoot(cwd)
		if err == nil {
			project = root
			summary = WorkspaceSummary(root)
		} else if d := h.getenv(claudecode.EnvProjectDir); d != "" {
			project = absPathFrom(cwd, d)
		} else {
			project = cwd
		}
		vars = [][2]string{
			{runs.EnvProjectDir, project},
			{runs.EnvTaskContext, runs.TaskContextMain},
			{runs.EnvSessionDir, sessionDir},
		}
	}
	if f := h.getenv(claudecode.EnvEnvFile); f != "" {
		h.appendEnvFile(f, vars)
	}
	if summary != "" {
		h.writeJSON(map[string]any{"hookSpecificOutput": sessionOutput{
			HookEventName:     claudecode.EventSessionStart,
			AdditionalContext: summary,
		}})
	}
}

type sessionOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// appendEnvFile appends "export KEY=value" lines in one write, so lines of
// concurrent hooks never interleave. Only a regular file is written: the
// open never blocks (O_NONBLOCK: a FIFO without a reader fails at once
// instead of hanging the hook), and anything but a regular file is refused.
func (h *hookRun) appendEnvFile(path string, vars [][2]string) {
	var b strings.Builder
	for _, kv := range vars {
		if strings.ContainsAny(kv[1], "\x00\n\r") {
			h.warnf("%s=%q holds a line break; not exported", kv[0], kv[1])
			continue
		}
		b.WriteString("export " + kv[0] + "=" + runs.ShellQuote(kv[1]) + "\n")
	}
	f, err := filesafe.OpenRegular(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600, true)
	if errors.Is(err, filesafe.ErrNotRegular) {
		h.warnf("%s=%s is not a regular file; variables not exported", claudecode.EnvEnvFile, path)
		return
	}
	if err != nil {
		h.warnf("%s: %v", claudecode.EnvEnvFile, err)
		return
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		h.warnf("%s: %v", claudecode.EnvEnvFile, err)
	}
}

// summaryTaskInfo is what the summary shows of a task file.
// maxSummaryTasks caps the remaining tasks listed in a story summary.
const maxSummaryTasks = 15

// StorySummary describes the worktree's story in one paragraph: title,
// status, done/total tasks and what remains. It reads the worktree's copy of
// the story folder (the main checkout's when the worktree has none) with
// store's light reader: broken files are counted, never fatal.
func StorySummary(wt StoryWorktree) string {
	rel := filepath.FromSlash(store.StoryDirRel(wt.Story))
	root := wt.Worktree
	if fi, err := os.Stat(filepath.Join(root, rel)); (err != nil || !fi.IsDir()) && wt.Repo != "" {
		if fi, err := os.Stat(filepath.Join(wt.Repo, rel)); err == nil && fi.IsDir() {
			root = wt.Repo
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SAGA story worktree for story %q (%s).", wt.Story, wt.Worktree)
	story, err := store.ReadStoryBrief(root, wt.Story)
	if err != nil {
		fmt.Fprintf(&b, " Its folder %s%c was not found, so its tasks are unknown.", store.StoryDirRel(wt.Story), filepath.Separator)
		b.WriteString(storyScopeNote(wt.Story))
		return b.String()
	}
	if story.Title != "" {
		fmt.Fprintf(&b, " Title: %s.", strings.TrimRight(summaryText(story.Title), "."))
	}
	status := cmp.Or(story.Status, store.StatusPending)
	done := 0
	statusOf := map[string]string{}
	for _, t := range story.Tasks {
		statusOf[t.ID] = t.Status
		if t.Status == store.StatusCompleted {
			done++
		}
	}
	fmt.Fprintf(&b, " Status: %s; %d/%d tasks completed.", summaryText(status), done, len(story.Tasks))
	var remaining []string
	broken := 0
	for _, t := range story.Tasks {
		if t.Broken {
			broken++
		}
		if t.Status == store.StatusCompleted {
			continue
		}
		item := fmt.Sprintf("%s [%s]", t.ID, summaryText(cmp.Or(t.Status, "unknown status")))
		if t.Subject != "" {
			item += " " + summaryText(t.Subject)
		}
		var open []string
		for _, by := range t.BlockedBy {
			if statusOf[by] != store.StatusCompleted {
				open = append(open, by)
			}
		}
		if len(open) > 0 {
			item += " (blocked by " + strings.Join(open, ", ") + ")"
		}
		remaining = append(remaining, item)
	}
	switch {
	case len(story.Tasks) == 0:
		b.WriteString(" The story has no task files yet.")
	case len(remaining) == 0:
		b.WriteString(" All tasks are completed.")
	default:
		shown := remaining[:min(len(remaining), maxSummaryTasks)]
		fmt.Fprintf(&b, " Remaining: %s", strings.Join(shown, "; "))
		if more := len(remaining) - len(shown); more > 0 {
			fmt.Fprintf(&b, "; and %d more", more)
		}
		b.WriteString(".")
	}
	if story.Broken {
		broken++
	}
	if broken > 0 {
		fmt.Fprintf(&b, " %d file(s) of the story could not be read cleanly; run `saga-lsp check` to see why.", broken)
	}
	b.WriteString(storyScopeNote(wt.Story))
	return b.String()
}

func storyScopeNote(story string) string {
	return fmt.Sprintf(" Edits are limited to this worktree; inside .saga/ only .saga/stories/%s/ may change.", story)
}

// WorkspaceSummary is one line about the workspace at root: how many
// stories and epics it has (store.CountItems: folders listed only).
func WorkspaceSummary(root string) string {
	stories, epics := store.CountItems(root)
	return fmt.Sprintf("SAGA workspace %s: %s, %s. Stories live in .saga/stories/<story>/ (story.json plus one JSON file per task), epics in .saga/epics/; `saga-lsp check` lints them and `saga-lsp plan <story>` shows the order of work.",
		root, countNoun(stories, "story", "stories"), countNoun(epics, "epic", "epics"))
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// summaryText folds white space runs (line breaks included) to single spaces
// and caps the length, so file content cannot reshape the summary.
func summaryText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
