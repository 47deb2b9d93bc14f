package store

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Code is a stable diagnostic code; tests, CI scripts and quick fixes key on it.
type Code string

const (
	CodeJSONSyntax         Code = "json-syntax"
	CodeSchema             Code = "schema"
	CodeUnknownProperty    Code = "unknown-property"
	CodeInvalidID          Code = "invalid-id"
	CodeIDMismatch         Code = "id-mismatch"
	CodeDuplicateID        Code = "duplicate-id"
	CodeUnknownDependency  Code = "unknown-dependency"
	CodeSelfDependency     Code = "self-dependency"
	CodeDependencyCycle    Code = "dependency-cycle"
	CodeUnknownStory       Code = "unknown-story"
	CodeEpicPrefix         Code = "epic-prefix"
	CodeOrphanStory        Code = "orphan-story"
	CodeEmptyStory         Code = "empty-story"
	CodeStatusInconsistent Code = "status-inconsistent"
	CodeMissingStoryFile   Code = "missing-story-file"
	CodeUnreadableFile     Code = "unreadable-file"
	CodeMisplacedFile      Code = "misplaced-file"
	CodeAbsentEpic         Code = "absent-epic"
	// CodePathsOverlap: two stories of an epic whose paths overlap, which
	// the epic runner never runs at once (docs/landing.md#conflicts-foreseen).
	CodePathsOverlap Code = "paths-overlap"
	// LSP only: they depend on live run state.
	CodeStaleTask    Code = "stale-task"
	CodeStoryBlocked Code = "story-blocked"
	CodeStoryHeld    Code = "story-held"
	CodeCheckFailed  Code = "check-failed" // the task's last check result failed
	// CodeProtectedFileChanged: the story's last run found protected files
	// changed (docs/worker.md#protected-files).
	CodeProtectedFileChanged Code = "protected-file-changed"
)

// Severity follows LSP's DiagnosticSeverity numbering.
type Severity int

const (
	SeverityError   Severity = 1
	SeverityWarning Severity = 2
	SeverityInfo    Severity = 3
	SeverityHint    Severity = 4
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	default:
		return "hint"
	}
}

// Severities gives each code its one severity (docs/format.md#diagnostic-codes).
var severities = map[Code]Severity{
	CodeJSONSyntax: SeverityError, CodeSchema: SeverityError, CodeUnknownProperty: SeverityWarning,
	CodeInvalidID: SeverityError, CodeIDMismatch: SeverityError, CodeDuplicateID: SeverityError,
	CodeUnknownDependency: SeverityError, CodeSelfDependency: SeverityError, CodeDependencyCycle: SeverityError,
	CodeUnknownStory: SeverityError, CodeEpicPrefix: SeverityWarning, CodeOrphanStory: SeverityWarning,
	CodeEmptyStory: SeverityWarning, CodeStatusInconsistent: SeverityWarning, CodeMissingStoryFile: SeverityError,
	CodeUnreadableFile: SeverityError, CodeMisplacedFile: SeverityWarning, CodeAbsentEpic: SeverityInfo, CodeStaleTask: SeverityWarning, CodeStoryBlocked: SeverityInfo,
	CodeStoryHeld: SeverityInfo, CodePathsOverlap: SeverityInfo,
	CodeCheckFailed: SeverityWarning, CodeProtectedFileChanged: SeverityWarning,
}

// SeverityOf returns the severity of a code.
func SeverityOf(c Code) Severity {
	if s, ok := severities[c]; ok {
		return s
	}
	return SeverityError
}

// Position is an LSP position: 0-based line, UTF-16 code-unit column.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span in LSP coordinates.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// SpanRange converts a byte span of a document to a Range.
func SpanRange(doc *jsonc.Document, start, end int) Range {
	s, e := doc.Lines().Position(start), doc.Lines().Position(end)
	return Range{Start: Position{s.Line, s.Character}, End: Position{e.Line, e.Character}}
}

// Diagnostic is one finding, placed on the file holding the offending text.
type Diagnostic struct {
	File     string // path relative to the workspace root, slash-separated
	Range    Range
	Start    int // byte offsets of Range, for quick fixes that edit the text
	End      int
	Severity Severity
	Code     Code
	Message  string
	// Fix carries what a quick fix needs (the missing property, the weak link…).
	Fix *Fix
}

// String is the finding as a person reads it: file:line:col (1-based), the
// message and the code.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s [%s]", d.File, d.Range.Start.Line+1, d.Range.Start.Character+1, d.Message, d.Code)
}

// Fix is the data a quick fix for a diagnostic acts on.
type Fix struct {
	Property string `json:"property,omitempty"` // schema: the missing property
	Want     string `json:"want,omitempty"`     // id-mismatch: the name the id must have; invalid-id: a valid slug
	Ref      string `json:"ref,omitempty"`      // unknown-dependency: the missing id; dependency-cycle: the blocker to drop
	Weak     bool   `json:"weak,omitempty"`     // dependency-cycle: this entry is the cycle's weakest link
	// paths-overlap: story Story of epic Epic gets blocker Ref (the
	// earlier in plan order); unset when that would make a cycle.
	Epic  string `json:"epic,omitempty"`
	Story string `json:"story,omitempty"`
}

// SortDiagnostics orders diagnostics by file, then position, then code, so
// output is stable.
func SortDiagnostics(ds []Diagnostic) {
	slices.SortFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Start, b.Start),
			cmp.Compare(a.End, b.End),
			cmp.Compare(a.Code, b.Code),
			cmp.Compare(a.Message, b.Message),
		)
	})
}
