package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/schema"
)

// textDocument/hover: what a reference points at, a summary of the file's
// own id, or the schema documentation of a property name. Markdown; the
// range is the string (or key) node hovered. Null anywhere else.

// hoverExcerptLen bounds the description excerpt shown in a hover, in characters.
const hoverExcerptLen = 300

// hoverMaxBlockers bounds the blockers a task's hover names; the rest are
// counted (a hover is read at a glance, whatever the list's length).
const hoverMaxBlockers = 20

func hover(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.HoverParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	t := snap.targetAt(p.TextDocument.URI, p.Position)
	if t.node == nil {
		return nil, nil
	}
	var md string
	switch t.kind {
	case targetTaskRef:
		md = hoverTaskRef(t)
	case targetTaskID:
		if t.story != nil {
			if task := t.story.Task(t.name); task != nil {
				md = hoverTaskSummary(task, t.story.ID)
			}
		}
		if md == "" && t.file.Task != nil { // the file is not (yet) in the model's story
			md = hoverTaskSummary(t.file.Task, t.file.Owner)
		}
	case targetStoryID:
		if t.story != nil {
			md = hoverStorySummary(snap, t.story)
		}
	case targetStoryEpic:
		md = hoverEpicRef(snap, t.name)
	case targetEpicID:
		if t.epic != nil {
			md = hoverEpicSummary(snap, t.epic)
		}
	case targetChild, targetChildRef:
		if st := snap.WS.Story(t.name); st != nil {
			md = hoverStorySummary(snap, st)
		} else {
			md = fmt.Sprintf("No story `%s`: the folder `.saga/stories/%s/` does not exist.", t.name, t.name)
		}
	case targetPropertyKey:
		md = hoverProperty(s, t)
	}
	if md == "" {
		return nil, nil
	}
	r := nodeRange(t.file, t.node)
	return &protocol.Hover{
		Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md},
		Range:    &r,
	}, nil
}

// hoverTaskRef describes the task a blockedBy entry names.
func hoverTaskRef(t target) string {
	storyID := t.file.Owner
	if t.story != nil {
		if task := t.story.Task(t.name); task != nil {
			return hoverTaskSummary(task, storyID)
		}
	}
	return fmt.Sprintf("No task `%s` in story `%s`.", t.name, storyID)
}

// hoverTaskSummary: subject, status, blockers and a description excerpt.
func hoverTaskSummary(task *store.Task, storyID string) string {
	var b strings.Builder
	hoverHeading(&b, "Task", task.ID, task.Subject)
	fmt.Fprintf(&b, "Status: %s", hoverStatus(task.Status))
	if task.Priority != "" {
		fmt.Fprintf(&b, " · priority `%s`", task.Priority)
	}
	fmt.Fprintf(&b, " · story `%s`", storyID)
	if n := len(task.BlockedBy); n > 0 {
		ids := make([]string, 0, min(n, hoverMaxBlockers))
		for _, r := range task.BlockedBy[:min(n, hoverMaxBlockers)] {
			ids = append(ids, "`"+r.ID+"`")
		}
		fmt.Fprintf(&b, "\n\nBlocked by %s", strings.Join(ids, ", "))
		if n > hoverMaxBlockers {
			fmt.Fprintf(&b, " and %d more", n-hoverMaxBlockers)
		}
	}
	hoverDescription(&b, task.Description)
	return b.String()
}

// hoverStorySummary: title, effective status, done/total tasks, epic.
func hoverStorySummary(snap *Snapshot, st *store.Story) string {
	var b strings.Builder
	hoverHeading(&b, "Story", st.ID, st.Title)
	fmt.Fprintf(&b, "Status: `%s` · %d/%d tasks done", st.EffectiveStatus(), st.Done(), len(st.Tasks))
	if e := st.EpicID(); e != "" {
		fmt.Fprintf(&b, " · epic `%s`", e)
		if snap.WS.Epic(e) == nil {
			b.WriteString(" (missing)")
		}
	}
	if st.File == nil {
		fmt.Fprintf(&b, "\n\nThe folder has no `story.json`.")
	}
	hoverDescription(&b, st.Description)
	return b.String()
}

// hoverHeading starts a summary: "**<what> `id`** — title", then a blank line.
func hoverHeading(b *strings.Builder, what, id, title string) {
	fmt.Fprintf(b, "**%s `%s`**", what, id)
	if title != "" {
		fmt.Fprintf(b, " — %s", hoverEscape(title))
	}
	b.WriteString("\n\n")
}

// hoverDescription ends a summary with an excerpt of the description, under
// a rule.
func hoverDescription(b *strings.Builder, description string) {
	if d := hoverExcerpt(description, hoverExcerptLen); d != "" {
		b.WriteString("\n\n---\n\n")
		b.WriteString(d)
	}
}

// hoverEpicRef describes the epic a story's `epic` field names.
func hoverEpicRef(snap *Snapshot, id string) string {
	if e := snap.WS.Epic(id); e != nil {
		return hoverEpicSummary(snap, e)
	}
	return fmt.Sprintf("No epic `%s`: neither `.saga/epics/%s/epic.json` nor `.saga/epics/%s.json` exists.", id, id, id)
}

// hoverEpicSummary: title, status, children count (and how many are done).
func hoverEpicSummary(snap *Snapshot, e *store.Epic) string {
	var b strings.Builder
	hoverHeading(&b, "Epic", e.ID, e.Title)
	if e.Status != "" {
		fmt.Fprintf(&b, "Status: `%s` · ", e.Status)
	}
	done := 0
	for _, c := range e.Children {
		if st := snap.WS.Story(c.ID); st != nil && st.EffectiveStatus() == store.StatusCompleted {
			done++
		}
	}
	n := len(e.Children)
	fmt.Fprintf(&b, "%d child stor%s, %d completed", n, hoverPluralY(n), done)
	if e.File != nil {
		fmt.Fprintf(&b, " · `%s`", e.File.Rel)
	}
	hoverDescription(&b, e.Description)
	return b.String()
}

// hoverProperty documents a property name from the file kind's schema.
func hoverProperty(s *Server, t target) string {
	k, ok := t.file.Kind.Schema()
	if !ok {
		return ""
	}
	prop, ok := s.parser.Schemas().Lookup(k, schema.InstancePath(t.loc.Path))
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**`%s`**", prop.Name)
	var tags []string
	if prop.Required {
		tags = append(tags, "required")
	}
	if prop.Type != "" {
		tags = append(tags, prop.Type)
	}
	if len(tags) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(tags, ", "))
	}
	if prop.Description != "" {
		b.WriteString("\n\n")
		b.WriteString(prop.Description)
	}
	if len(prop.Enum) > 0 {
		vals := make([]string, len(prop.Enum))
		for i, v := range prop.Enum {
			vals[i] = "`" + v + "`"
		}
		fmt.Fprintf(&b, "\n\nAllowed values: %s", strings.Join(vals, ", "))
	}
	if prop.Default != "" {
		fmt.Fprintf(&b, "\n\nDefault: `%s`", prop.Default)
	}
	return b.String()
}

// excerpt returns the first max characters of s, cut at a word boundary,
// with an ellipsis when something was left out.
func hoverExcerpt(s string, max int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut, n := len(s), 0
	for i := range s {
		if n == max {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	// Cut at the last space when the limit falls inside a word.
	if r, _ := utf8.DecodeRuneInString(s[cut:]); !unicode.IsSpace(r) {
		if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
			head = head[:i]
		}
	}
	return strings.TrimRightFunc(head, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;:", r) }) + "…"
}

// hoverEscape escapes the characters that would turn a one-line title
// into markup.
func hoverEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '#', '|':
			b.WriteByte('\\')
		case '\n', '\r':
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hoverStatus(s string) string {
	if s == "" {
		return "unset"
	}
	return "`" + s + "`"
}

func hoverPluralY(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
