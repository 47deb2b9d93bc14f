package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// textDocument/codeAction: a quick fix for each fixable diagnostic code, and
// the source actions "Create task in this story" (task and story.json
// files) and "Create story in this epic" (epic files). Every action is a
// WorkspaceEdit; the server writes nothing itself.

// maxFixedDiagnostics bounds the fixable diagnostics one request computes
// quick fixes for, first in the file first: a selection over a file with
// 60,000 findings must answer at once, and no one picks from 60,000 fixes
// (a narrower range gets its own).
const maxFixedDiagnostics = 200

func codeAction(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.CodeActionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	actions := []*protocol.CodeAction{} // [] never null
	f := snap.FileAt(p.TextDocument.URI)
	if f == nil || f.Doc == nil || f.Kind == store.KindOther || f.Kind == store.KindJournal {
		return actions, nil
	}
	s.mu.Lock()
	ci := s.client
	s.mu.Unlock()
	ca := &codeActions{s: s, snap: snap, f: f, ci: ci}
	if kindWanted(p.Context.Only, protocol.CodeActionKindQuickFix) {
		byTitle := map[string]*protocol.CodeAction{}
		matched := ca.matchDiagnostics(p)
		if len(matched) > maxFixedDiagnostics {
			s.log.Info("quick fixes offered for the first fixable diagnostics of the range only", "uri", p.TextDocument.URI, "fixed", maxFixedDiagnostics)
			matched = matched[:maxFixedDiagnostics]
		}
		for _, m := range matched {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for _, a := range ca.quickFixes(m.server, m.client) {
				// Two diagnostics with the same fix (duplicate-id and
				// id-mismatch on one id) share one action.
				raw, _ := encode(a.Edit)
				key := a.Title + "\x00" + string(raw)
				if prev := byTitle[key]; prev != nil {
					prev.Diagnostics = append(prev.Diagnostics, a.Diagnostics...)
					continue
				}
				byTitle[key] = a
				actions = append(actions, a)
			}
		}
	}
	if kindWanted(p.Context.Only, protocol.CodeActionKindSource) {
		actions = append(actions, ca.sourceActions()...)
	}
	return actions, nil
}

// kindWanted applies context.only: a kind is wanted when only is empty or
// names it or one of its parents ("source" covers "source.x").
func kindWanted(only []protocol.CodeActionKind, kind protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == kind || strings.HasPrefix(string(kind), string(o)+".") {
			return true
		}
	}
	return false
}

type codeActions struct {
	s    *Server
	snap *Snapshot
	f    *store.File
	ci   clientInfo
}

// diagMatch pairs a diagnostic the client sent with the server's current
// one for the same code and range (which has byte offsets and the fix).
type diagMatch struct {
	server store.Diagnostic
	client protocol.Diagnostic
}

// matchDiagnostics resolves the context's diagnostics against the snapshot,
// keeping those with a fix.
// A diagnostic that no longer exists (the text moved on) gets no fix: its
// data would edit the wrong bytes. When the client sends no diagnostics at
// all, the server's own diagnostics overlapping the range are used, so
// clients that do not echo diagnostics still get quick fixes.
func (ca *codeActions) matchDiagnostics(p protocol.CodeActionParams) []diagMatch {
	current := ca.snap.WS.FileDiagnostics(ca.f.Rel)
	var out []diagMatch
	if len(p.Context.Diagnostics) == 0 {
		for _, d := range current {
			if d.Fix != nil && rangesOverlap(toRange(d.Range), p.Range) {
				out = append(out, diagMatch{server: d, client: toProtocolDiagnostics([]store.Diagnostic{d})[0]})
				if len(out) > maxFixedDiagnostics {
					break // enough to know the range holds more than are fixed
				}
			}
		}
		return out
	}
	type diagKey struct {
		code store.Code
		r    protocol.Range
	}
	byKey := make(map[diagKey]store.Diagnostic, len(current))
	for _, d := range slices.Backward(current) { // the first of equal ones wins
		byKey[diagKey{d.Code, toRange(d.Range)}] = d
	}
	for _, cd := range p.Context.Diagnostics {
		code, ok := cd.Code.(protocol.String)
		if !ok {
			continue
		}
		if src, ok := cd.Source.Get(); ok && src != "saga" {
			continue
		}
		if d, ok := byKey[diagKey{store.Code(code), cd.Range}]; ok && d.Fix != nil {
			out = append(out, diagMatch{server: d, client: cd})
		}
	}
	return out
}

func rangesOverlap(a, b protocol.Range) bool {
	return !positionBefore(a.End, b.Start) && !positionBefore(b.End, a.Start)
}

func positionBefore(a, b protocol.Position) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Character < b.Character)
}

// action builds a code action; diag, when set, is the diagnostic it resolves.
func (ca *codeActions) action(title string, kind protocol.CodeActionKind, preferred bool, edit *protocol.WorkspaceEdit, diag *protocol.Diagnostic) *protocol.CodeAction {
	k := kind
	a := &protocol.CodeAction{Title: title, Kind: &k, Edit: edit}
	if preferred {
		yes := true
		a.IsPreferred = &yes
	}
	if diag != nil {
		a.Diagnostics = []protocol.Diagnostic{*diag}
	}
	return a
}

// textFix builds a quick fix editing only this file with byte spans,
// refusing spans that would break the JSON.
func (ca *codeActions) textFix(title string, preferred bool, spans []jsonc.Edit, diag *protocol.Diagnostic) *protocol.CodeAction {
	if len(spans) == 0 || !keepsSyntax(ca.f, spans) {
		return nil
	}
	b := newEditBuilder(ca.snap, ca.ci.documentChanges)
	b.edit(ca.f.Rel, spanEdits(ca.f, spans)...)
	return ca.action(title, protocol.CodeActionKindQuickFix, preferred, b.build(), diag)
}

func (ca *codeActions) quickFixes(d store.Diagnostic, cd protocol.Diagnostic) []*protocol.CodeAction {
	f := ca.f
	fix := d.Fix
	if fix == nil {
		return nil
	}
	root := f.Doc.Root
	var out []*protocol.CodeAction
	add := func(a *protocol.CodeAction) {
		if a != nil {
			out = append(out, a)
		}
	}
	// The string node the diagnostic is on, and its container chain.
	path := nodeChain(root, d.Start, d.End)
	var node *jsonc.Node
	if len(path) > 0 {
		node = path[len(path)-1]
	}
	setString := func(title, want string) {
		if node == nil || node.Kind != jsonc.String || want == "" {
			return
		}
		add(ca.textFix(title, true, []jsonc.Edit{jsonc.Replace(node, jsonc.Quote(want))}, &cd))
	}
	switch d.Code {
	case store.CodeIDMismatch, store.CodeDuplicateID:
		setString(fmt.Sprintf("Set id to %q", fix.Want), fix.Want)
	case store.CodeInvalidID:
		if node != nil && node.Kind == jsonc.String {
			setString(fmt.Sprintf("Change %q to %q", node.Str(), fix.Want), fix.Want)
		}
	case store.CodeUnknownDependency:
		arr, i := elementOf(path)
		if arr == nil {
			return nil
		}
		add(ca.textFix(fmt.Sprintf("Remove %s from blockedBy", fix.Ref), false, jsonc.RemoveElement(f.Src, arr, i), &cd))
		if f.Kind == store.KindTask {
			add(ca.createTaskFix(fix.Ref, &cd))
		}
	case store.CodeSelfDependency:
		arr, i := elementOf(path)
		if arr == nil {
			return nil
		}
		add(ca.textFix(fmt.Sprintf("Remove %s from blockedBy", fix.Ref), true, jsonc.RemoveElement(f.Src, arr, i), &cd))
	case store.CodeDependencyCycle:
		if !fix.Weak {
			return nil
		}
		arr, i := elementOf(path)
		if arr == nil {
			return nil
		}
		from := f.Name
		if f.Kind == store.KindEpic && len(path) >= 3 {
			if id := path[len(path)-3].Get("id"); id != nil && id.Kind == jsonc.String {
				from = id.Str()
			}
		}
		add(ca.textFix(fmt.Sprintf("Remove weakest link %s → %s", from, fix.Ref), true, jsonc.RemoveElement(f.Src, arr, i), &cd))
	case store.CodeSchema:
		if fix.Property == "" {
			return nil
		}
		objPath := nodePathStart(root, d.Start)
		if len(objPath) == 0 {
			return nil
		}
		obj := objPath[len(objPath)-1]
		if obj.Member(fix.Property) != nil {
			return nil
		}
		value, ok := ca.defaultValue(fix.Property, len(objPath) == 1)
		if !ok {
			return nil
		}
		insert := jsonc.LayoutOf(f.Src, root).InsertMember(f.Src, obj, fix.Property, jsonc.Text(value))
		add(ca.textFix(fmt.Sprintf("Add missing property %q", fix.Property), true, []jsonc.Edit{insert}, &cd))
	case store.CodePathsOverlap:
		add(ca.addBlockerFix(fix, &cd))
	case store.CodeUnknownProperty:
		// Upstream SAGA rejects a story or epic with a status: never add one.
		if fix.Want == "" || (fix.Want == "status" && f.Kind != store.KindTask) {
			return nil
		}
		obj, m := memberWithKey(root, d.Start, d.End)
		if m == nil || obj.Member(fix.Want) != nil {
			return nil // renaming would make a duplicate key
		}
		add(ca.textFix(fmt.Sprintf("Rename property %q to %q", m.Key.Str(), fix.Want), true,
			[]jsonc.Edit{{Start: m.Key.Start(), End: m.Key.End(), Text: jsonc.Quote(fix.Want)}}, &cd))
	}
	return out
}

// addBlockerFix edits the epic's file, not the task's: story fix.Story
// blockedBy fix.Ref, the order an epic run keeps for their overlapping
// paths made explicit (docs/landing.md#conflicts-foreseen). The store
// gives no Fix when the blocker would close a cycle.
func (ca *codeActions) addBlockerFix(fix *store.Fix, diag *protocol.Diagnostic) *protocol.CodeAction {
	e := ca.snap.WS.Epic(fix.Epic)
	if fix.Epic == "" || e == nil || e.File == nil || e.File.Doc == nil {
		return nil
	}
	c := e.Child(fix.Story)
	if c == nil || c.Object == nil || slices.ContainsFunc(c.BlockedBy, func(r store.Ref) bool { return r.ID == fix.Ref }) {
		return nil
	}
	ef := e.File
	lay := jsonc.LayoutOf(ef.Src, ef.Doc.Root)
	var span jsonc.Edit
	if arr := c.Object.Get("blockedBy"); arr != nil && arr.Kind == jsonc.Array {
		span = lay.AppendElement(ef.Src, arr, func(pretty bool) string { return lay.Marshal(fix.Ref, pretty) })
	} else if arr == nil {
		span = lay.InsertMember(ef.Src, c.Object, "blockedBy", jsonc.Text(lay.Marshal([]string{fix.Ref}, false)))
	} else {
		return nil
	}
	if !keepsSyntax(ef, []jsonc.Edit{span}) {
		return nil
	}
	b := newEditBuilder(ca.snap, ca.ci.documentChanges)
	b.edit(ef.Rel, spanEdits(ef, []jsonc.Edit{span})...)
	return ca.action(store.AddBlockerTitle(fix), protocol.CodeActionKindQuickFix, true, b.build(), diag)
}

// elementOf returns the array holding the last node of path and its index.
func elementOf(path []*jsonc.Node) (*jsonc.Node, int) {
	if len(path) < 2 {
		return nil, -1
	}
	arr, n := path[len(path)-2], path[len(path)-1]
	if arr.Kind != jsonc.Array {
		return nil, -1
	}
	i := sort.Search(len(arr.Elems()), func(i int) bool { return arr.Elems()[i].Start() >= n.Start() })
	if i < len(arr.Elems()) && arr.Elems()[i] == n {
		return arr, i
	}
	return nil, -1
}

// nodePathStart finds the object starting at offset (a schema diagnostic
// for a missing property sits on the object's opening brace).
func nodePathStart(root *jsonc.Node, offset int) []*jsonc.Node {
	var chain []*jsonc.Node
	for n := root; n != nil && offset >= n.Start() && offset < n.End(); n = childHolding(n, offset, offset+1) {
		chain = append(chain, n)
		if n.Start() == offset && n.Kind == jsonc.Object {
			return chain
		}
	}
	return nil
}

// defaultValue is the JSON text inserted for a missing required property:
// valid on its own, so the fix does not trade one error for another.
func (ca *codeActions) defaultValue(prop string, topLevel bool) (string, bool) {
	f := ca.f
	switch prop {
	case "blockedBy", "children":
		return "[]", true
	case "status":
		return jsonc.Quote(store.StatusPending), true
	case "description":
		return `""`, true
	case "subject", "title":
		// Both must be non-empty: a readable form of the file's name.
		return jsonc.Quote(humanizeID(f.Name)), true
	case "id":
		if !topLevel || f.Name == "" {
			return "", false // an epic child's id names a story: nothing to guess
		}
		return jsonc.Quote(f.Name), true
	}
	return `""`, true
}

// humanizeID turns "write-tests" (or "epic--write-tests") into "Write tests".
func humanizeID(id string) string {
	if i := strings.LastIndex(id, "--"); i >= 0 {
		id = id[i+2:]
	}
	words := strings.ReplaceAll(id, "-", " ")
	if words == "" {
		return "Untitled"
	}
	return strings.ToUpper(words[:1]) + words[1:]
}

// canCreate tells whether the client can apply CreateFile operations.
func (ca *codeActions) canCreate() bool { return ca.ci.documentChanges && ca.ci.resourceCreate }

// newTaskContent encodes a new task as `saga-lsp new task` writes it, and
// checks it passes the file's own rules.
func (ca *codeActions) newTaskContent(story, id string) (string, []byte, bool) {
	rel := store.TaskFileRel(story, id)
	doc := store.TaskDoc{ID: id, Subject: humanizeID(id), Description: "", Status: store.StatusPending, BlockedBy: []string{}}
	data, ok := ca.encodeValid(rel, doc)
	return rel, data, ok
}

func (ca *codeActions) encodeValid(rel string, doc any) ([]byte, bool) {
	data, err := store.MarshalIndent(doc)
	if err != nil {
		return nil, false
	}
	for _, d := range ca.s.parser.Parse(rel, data, -1).Local {
		if d.Severity == store.SeverityError {
			ca.s.log.Warn("generated file would be invalid", "rel", rel, "code", d.Code, "message", d.Message)
			return nil, false
		}
	}
	return data, true
}

// createTaskFix: "Create task <ref>" for an unknown blockedBy entry.
func (ca *codeActions) createTaskFix(ref string, diag *protocol.Diagnostic) *protocol.CodeAction {
	story := ca.f.Owner
	if !ca.canCreate() || !store.ValidID(ref) || store.ReservedTaskID(ref) || !store.ValidCanonical(story) || store.CheckNameLength("task id", ref) != nil {
		return nil
	}
	if st := ca.snap.WS.Story(story); (st != nil && st.Task(ref) != nil) || ca.snap.WS.File(store.TaskFileRel(story, ref)) != nil {
		return nil
	}
	rel, data, ok := ca.newTaskContent(story, ref)
	if !ok {
		return nil
	}
	b := newEditBuilder(ca.snap, true)
	b.createFile(rel, data)
	return ca.action(fmt.Sprintf("Create task %s", ref), protocol.CodeActionKindQuickFix, false, b.build(), diag)
}

// sourceActions: whole-file actions, offered anywhere in the file.
func (ca *codeActions) sourceActions() []*protocol.CodeAction {
	var out []*protocol.CodeAction
	if a := ca.runStory(); a != nil {
		out = append(out, a)
	}
	if !ca.canCreate() {
		return out
	}
	switch ca.f.Kind {
	case store.KindTask, store.KindStory:
		if a := ca.createTaskInStory(); a != nil {
			out = append(out, a)
		}
	case store.KindEpic:
		if a := ca.createStoryInEpic(); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// runStory is the source action "Run story" for a story's files: the same
// command as the code lens, so editors without lenses can start a worker.
func (ca *codeActions) runStory() *protocol.CodeAction {
	story := ca.f.Owner
	if (ca.f.Kind != store.KindTask && ca.f.Kind != store.KindStory) || !store.ValidCanonical(story) || ca.snap.WS.Story(story) == nil {
		return nil
	}
	lens := lensCommand(protocol.Range{}, "Run story "+story, ca.s.clientInfo().commandPrefix+"runStory",
		[]any{map[string]string{"story": story}})
	kind := protocol.CodeActionKindSource
	return &protocol.CodeAction{Title: lens.Command.Title, Kind: &kind, Command: lens.Command}
}

// freeName returns base, base-2, base-3… the first that taken refuses.
func freeName(base string, taken func(string) bool) string {
	name := base
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

func (ca *codeActions) createTaskInStory() *protocol.CodeAction {
	story := ca.f.Owner
	if !store.ValidCanonical(story) {
		return nil
	}
	st := ca.snap.WS.Story(story)
	id := freeName("new-task", func(id string) bool {
		return (st != nil && st.Task(id) != nil) || ca.snap.WS.File(store.TaskFileRel(story, id)) != nil
	})
	rel, data, ok := ca.newTaskContent(story, id)
	if !ok {
		return nil
	}
	b := newEditBuilder(ca.snap, true)
	b.createFile(rel, data)
	return ca.action("Create task in this story", protocol.CodeActionKindSource, false, b.build(), nil)
}

func (ca *codeActions) createStoryInEpic() *protocol.CodeAction {
	f := ca.f
	epic := f.Owner
	if !store.ValidID(epic) || f.Epic == nil {
		return nil
	}
	// The story is written in the epic's dialect, as `saga-lsp new story
	// --epic` writes it.
	name, epicField := f.Epic.NewChild(freeName("new-story", func(n string) bool {
		id, _ := f.Epic.NewChild(n)
		return ca.snap.WS.Story(id) != nil || f.Epic.Child(id) != nil
	}))
	if store.CheckNameLength("story name", name) != nil {
		return nil // the epic's own name is already near the limit
	}
	rel := store.StoryFileRel(name)
	data, ok := ca.encodeValid(rel, store.StoryDoc{ID: name, Title: humanizeID(name), Description: "", Epic: epicField})
	if !ok {
		return nil
	}
	// The epic lists the story, as `saga-lsp new story --epic` does.
	epicSrc, err := store.AppendElement(f.Src, "/children", store.ChildDoc{ID: name, BlockedBy: []string{}})
	if err != nil {
		return nil // a broken epic: fix it first
	}
	b := newEditBuilder(ca.snap, true)
	b.createFile(rel, data)
	b.edit(f.Rel, diffEdit(f, epicSrc))
	return ca.action("Create story in this epic", protocol.CodeActionKindSource, false, b.build(), nil)
}
