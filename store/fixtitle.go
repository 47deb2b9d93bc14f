package store

import (
	"encoding/json"
	"fmt"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// FixTitles are the titles of the quick fixes the language server offers
// for d (lsp/code_action.go), for views that list a finding with its fix
// without editing anything (the dashboard's problems page). The first is
// the preferred fix when there is one. Nil when d has no quick fix.
// lsp's TestFixTitlesAgree checks them against the language server's.
func FixTitles(f *File, d Diagnostic) []string {
	fix := d.Fix
	if fix == nil || f == nil || f.Doc == nil || f.Kind == KindOther || f.Kind == KindJournal {
		return nil
	}
	switch d.Code {
	case CodeIDMismatch, CodeDuplicateID:
		if fix.Want != "" && isStringAt(f, d) {
			return []string{fmt.Sprintf("Set id to %q", fix.Want)}
		}
	case CodeInvalidID:
		if s, ok := stringAt(f, d); ok && fix.Want != "" {
			return []string{fmt.Sprintf("Change %q to %q", s, fix.Want)}
		}
	case CodeUnknownDependency:
		out := []string{fmt.Sprintf("Remove %s from blockedBy", fix.Ref)}
		// As the server's createTaskFix: never a task named like a reserved file.
		if f.Kind == KindTask && !ReservedTaskID(fix.Ref) {
			out = append(out, fmt.Sprintf("Create task %s", fix.Ref))
		}
		return out
	case CodeSelfDependency:
		return []string{fmt.Sprintf("Remove %s from blockedBy", fix.Ref)}
	case CodePathsOverlap:
		if fix.Epic != "" {
			return []string{AddBlockerTitle(fix)}
		}
	case CodeDependencyCycle:
		if !fix.Weak {
			return nil
		}
		from := f.Name
		if f.Epic != nil {
			for _, c := range f.Epic.Children {
				if c.Object != nil && d.Start >= c.Object.Start() && d.Start < c.Object.End() {
					from = c.ID
				}
			}
		}
		return []string{fmt.Sprintf("Remove weakest link %s → %s", from, fix.Ref)}
	case CodeSchema:
		if fix.Property == "" {
			return nil
		}
		// The language server inserts an "id" only at the top level: an
		// epic child's id names a story, nothing to guess.
		if fix.Property == "id" && (f.Doc.Root == nil || d.Start != f.Doc.Root.Start() || f.Name == "") {
			return nil
		}
		return []string{fmt.Sprintf("Add missing property %q", fix.Property)}
	case CodeUnknownProperty:
		if fix.Want == "" || (fix.Want == "status" && f.Kind != KindTask) {
			return nil
		}
		// Renaming would make a duplicate key when the object has one.
		if obj := objectWithKeyAt(f.Doc.Root, d.Start); obj != nil && obj.Member(fix.Want) == nil {
			if s, ok := stringAt(f, d); ok {
				return []string{fmt.Sprintf("Rename property %q to %q", s, fix.Want)}
			}
		}
	}
	return nil
}

// AddBlockerTitle is the title of paths-overlap's quick fix, which edits
// the epic: story fix.Story blocked by fix.Ref.
func AddBlockerTitle(fix *Fix) string {
	return fmt.Sprintf("Add %s to blockedBy of %s in epic %s", fix.Ref, fix.Story, fix.Epic)
}

// objectWithKeyAt is the object one of whose keys starts at offset.
func objectWithKeyAt(n *jsonc.Node, offset int) *jsonc.Node {
	for n != nil && offset >= n.Start() && offset < n.End() {
		var next *jsonc.Node
		switch n.Kind {
		case jsonc.Object:
			for _, m := range n.Members() {
				if m.Key.Start() == offset {
					return n
				}
				if m.Value != nil && offset >= m.Value.Start() && offset < m.Value.End() {
					next = m.Value
				}
			}
		case jsonc.Array:
			for _, e := range n.Elems() {
				if offset >= e.Start() && offset < e.End() {
					next = e
				}
			}
		}
		n = next
	}
	return nil
}

// stringAt is the JSON string the diagnostic spans, decoded.
func stringAt(f *File, d Diagnostic) (string, bool) {
	if d.Start < 0 || d.End > len(f.Src) || d.Start >= d.End {
		return "", false
	}
	var s string
	if json.Unmarshal(f.Src[d.Start:d.End], &s) != nil {
		return "", false
	}
	return s, true
}

func isStringAt(f *File, d Diagnostic) bool {
	_, ok := stringAt(f, d)
	return ok
}
