package lsp

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/schema"
)

// textDocument/completion, in task, story and epic files, from the parse of
// the open buffer (which recovers from half-typed text) and the raw bytes
// around the cursor:
//
//   - a task's blockedBy entry: sibling task ids (subject as detail), without
//     the task itself, the ids already listed, and every task that is
//     (transitively) blocked by this one — choosing it would close a cycle;
//   - an epic's children[].id: story folders not listed yet, `<epic>--…`
//     first; children[].blockedBy: sibling children, with the same
//     exclusions over the epic's children graph;
//   - a story's epic: epic ids, the one its canonical name implies first;
//   - any enum-valued property (status, priority): the allowed values;
//   - a property-name position in any object of the file: the schema's
//     properties not present yet, required first, documented; with snippet
//     support `"name": <skeleton>`.
//
// Values replace the whole token being typed — the string with its quotes,
// or a bare word — so accepting never doubles a quote. Missing separators
// are added: a comma before the next member or element, and (as an
// additional edit) after the previous member when the new one starts on a
// line of its own. The answer is a CompletionList (isIncomplete false), or
// null where nothing applies.

func completion(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.CompletionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	f := snap.FileAt(p.TextDocument.URI)
	if f == nil || f.Doc == nil {
		return nil, nil
	}
	kind, ok := f.Kind.Schema()
	if !ok {
		return nil, nil
	}
	s.mu.Lock()
	snippets := s.client.snippets
	s.mu.Unlock()

	off := f.Doc.Lines().Offset(jsonc.Position{Line: int(p.Position.Line), Character: int(p.Position.Character)})
	site, ok := complSiteAt(f.Doc, off)
	if !ok {
		return nil, nil
	}
	c := &complBuilder{snap: snap, schemas: s.parser.Schemas(), f: f, kind: kind, site: site, snippets: snippets}
	var items []protocol.CompletionItem
	if site.key {
		items, ok = c.properties()
	} else {
		items, ok = c.values()
	}
	if !ok {
		return nil, nil
	}
	if items == nil {
		items = []protocol.CompletionItem{}
	}
	return &protocol.CompletionList{IsIncomplete: false, Items: items}, nil
}

// complSite is where the cursor is, as far as completion cares.
type complSite struct {
	key bool // a property-name position

	// path: for a key, the object's path; for a value, the path of the
	// property holding it (array index of the element dropped).
	path   []jsonc.PathElem
	obj    *jsonc.Node   // key: the object
	member *jsonc.Member // key: the member whose key is being typed; nil at a fresh position

	array *jsonc.Node // value: the array when the value is an element of one
	elem  int         // value: index of the element being typed in array, -1 for a new one

	start, end int    // the bytes the item replaces
	suffix     string // appended to the inserted text: a separator before what follows
	commaAt    int    // where a missing comma before the new member goes, or -1
}

// complSiteAt classifies the cursor. ok is false where nothing applies:
// outside the document, after a complete token, between a key and its colon…
func complSiteAt(doc *jsonc.Document, off int) (complSite, bool) {
	site := complSite{elem: -1, commaAt: -1, start: off, end: off}
	loc := doc.LocationAt(off)
	n := loc.Node
	src := doc.Src
	switch {
	case n == nil && loc.Member != nil && len(loc.Path) > 0:
		// `"status": |`: the member has no value yet.
		if next := complNextSig(src, off); next < len(src) && complStartsKey(src, next) {
			site.suffix = ","
		}
		site.path = loc.Path
		return site, true
	case n == nil:
		return site, false
	case len(loc.Path) > 0 && loc.Path[len(loc.Path)-1].IsKey:
		if !complInToken(n, off) {
			return site, false
		}
		site.key = true
		site.path = loc.Path[:len(loc.Path)-1]
		site.obj, site.member = loc.Parent, loc.Member
		site.start, site.end = complTokenSpan(src, n, off)
		if prev := complPrevSig(src, n.Start()); prev >= 0 && src[prev] != '{' && src[prev] != ',' && complMemberEndsAt(loc.Parent, prev+1) {
			site.commaAt = prev + 1 // `"id": "x"⏎ "sta|`: the comma before the key is missing
		}
		return site, true
	case n.Kind == jsonc.Object:
		if off <= n.Start() {
			return site, false
		}
		prev := complPrevSig(src, off)
		switch {
		case prev >= n.Start() && (src[prev] == '{' || src[prev] == ','):
		case prev >= n.Start() && complMemberEndsAt(n, prev+1) && complLineBreak(src, prev+1, off):
			// A new line after a complete member: the comma is missing.
			site.commaAt = prev + 1
		default:
			return site, false
		}
		if next := complNextSig(src, off); next < len(src) && complStartsKey(src, next) {
			site.suffix = ","
		}
		site.key, site.path, site.obj = true, loc.Path, n
		return site, true
	case n.Kind == jsonc.Array:
		if off <= n.Start() {
			return site, false
		}
		prev := complPrevSig(src, off)
		if prev < n.Start() || (src[prev] != '[' && src[prev] != ',') {
			return site, false
		}
		// A following element (not a key swallowed by an unclosed array)
		// needs a comma after the new one.
		if next := complNextSig(src, off); next < len(src) && (src[next] == '"' || src[next] == '{' || src[next] == '[') && !complStartsKey(src, next) {
			site.suffix = ", "
		}
		site.path, site.array = loc.Path, n
		return site, true
	default: // a scalar: string, bare word, number, literal
		if !complInToken(n, off) {
			return site, false
		}
		site.path = loc.Path
		if p := loc.Parent; p != nil && p.Kind == jsonc.Array {
			site.array = p
			site.elem = loc.Path[len(loc.Path)-1].Index
			site.path = loc.Path[:len(loc.Path)-1]
		}
		site.start, site.end = complTokenSpan(src, n, off)
		return site, true
	}
}

// complInToken reports whether the cursor is in a scalar or key being typed:
// after its first byte, and for a closed string before its closing quote.
func complInToken(n *jsonc.Node, off int) bool {
	if off <= n.Start() || off > n.End() {
		return false
	}
	if n.Kind == jsonc.String && n.Closed && off == n.End() {
		return false
	}
	return n.Kind != jsonc.Object && n.Kind != jsonc.Array
}

// complTokenSpan is the range a completion replaces: the whole token, with
// its quotes; an unterminated string (which the parser ends at the line end)
// only up to the end of the word at the cursor.
func complTokenSpan(src []byte, n *jsonc.Node, off int) (int, int) {
	if n.Kind != jsonc.String || n.Closed || src[n.Start()] != '"' {
		return n.Start(), n.End()
	}
	end := off
	for end < n.End() && complWordByte(src[end]) {
		end++
	}
	return n.Start(), end
}

func complWordByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func complSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// complPrevSig is the offset of the last non-space byte before off, or -1.
func complPrevSig(src []byte, off int) int {
	i := min(off, len(src)) - 1
	for i >= 0 && complSpace(src[i]) {
		i--
	}
	return i
}

// complNextSig is the offset of the first non-space byte at or after off.
func complNextSig(src []byte, off int) int {
	i := off
	for i < len(src) && complSpace(src[i]) {
		i++
	}
	return i
}

func complLineBreak(src []byte, from, to int) bool {
	return strings.ContainsAny(string(src[from:min(to, len(src))]), "\n\r")
}

// complMemberEndsAt reports whether a member of obj has a complete value
// ending at end.
func complMemberEndsAt(obj *jsonc.Node, end int) bool {
	for _, m := range obj.Members() {
		if v := m.Value; v != nil && v.End() == end && m.Colon() >= 0 {
			return v.Closed && v.Kind != jsonc.Invalid
		}
	}
	return false
}

// complStartsKey reports whether the token at i is followed by a colon:
// it is the key of a member.
func complStartsKey(src []byte, i int) bool {
	var j int
	switch c := src[i]; {
	case c == '"':
		j = i + 1
		for j < len(src) && src[j] != '"' && src[j] != '\n' && src[j] != '\r' {
			if src[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(src) || src[j] != '"' {
			return false
		}
		j++
	case complWordByte(c):
		j = i
		for j < len(src) && complWordByte(src[j]) {
			j++
		}
	default:
		return false
	}
	j = complNextSig(src, j)
	return j < len(src) && src[j] == ':'
}

// complBuilder makes the items for one request.
type complBuilder struct {
	snap     *Snapshot
	schemas  *schema.Set
	f        *store.File
	kind     schema.Kind
	site     complSite
	snippets bool
}

// complKeys is the path's object keys only ("children", "blockedBy" for
// children/2/blockedBy).
func complKeys(path []jsonc.PathElem) []string {
	var out []string
	for _, e := range path {
		if e.Index < 0 {
			out = append(out, e.Key)
		}
	}
	return out
}

// properties: the property names allowed in the object and not yet in it.
func (c *complBuilder) properties() ([]protocol.CompletionItem, bool) {
	site := c.site
	props := c.schemas.Properties(c.kind, schema.InstancePath(site.path))
	if props == nil {
		return nil, false
	}
	present := map[string]bool{}
	if site.obj != nil {
		for i := range site.obj.Members() {
			m := &site.obj.Members()[i]
			if m != site.member {
				present[m.Key.Str()] = true
			}
		}
	}
	// Only the key is replaced when the member already has its colon.
	keyOnly := site.member != nil && site.member.Colon() >= 0
	quoted := site.start < site.end && c.f.Doc.Src[site.start] == '"'
	var items []protocol.CompletionItem
	for _, p := range props {
		if present[p.Name] || p.ReadOnly {
			continue
		}
		item := protocol.CompletionItem{
			Label:    p.Name,
			Kind:     protocol.CompletionItemKindProperty,
			Detail:   protocol.NewOptional(complPropertyDetail(p)),
			SortText: protocol.NewOptional(complSort(p.Required, p.Name)),
		}
		if p.Description != "" {
			item.Documentation = &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: p.Description}
		}
		name := complQuote(p.Name)
		text := name
		format := protocol.InsertTextFormatPlainText
		switch {
		case keyOnly:
		case c.snippets:
			text = complSnippetEscape(name) + ": " + complSkeleton(p) + site.suffix
			format = protocol.InsertTextFormatSnippet
		default:
			text = name + ": "
		}
		item.InsertTextFormat = format
		item.TextEdit = &protocol.TextEdit{Range: spanRange(c.f, site.start, site.end), NewText: text}
		if quoted {
			item.FilterText = protocol.NewOptional(name)
		}
		if site.commaAt >= 0 && !keyOnly {
			item.AdditionalTextEdits = []protocol.TextEdit{{Range: spanRange(c.f, site.commaAt, site.commaAt), NewText: ","}}
		}
		items = append(items, item)
	}
	return items, true
}

func complPropertyDetail(p schema.Property) string {
	var tags []string
	if p.Required {
		tags = append(tags, "required")
	}
	switch {
	case len(p.Enum) > 0:
		tags = append(tags, strings.Join(p.Enum, " | "))
	case p.Type != "":
		tags = append(tags, p.Type)
	}
	return strings.Join(tags, ", ")
}

// complSkeleton is the snippet for a property's value.
func complSkeleton(p schema.Property) string {
	switch {
	case len(p.Enum) > 0:
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = complChoiceEscape(v)
		}
		return `"${1|` + strings.Join(vals, ",") + `|}"`
	case p.Default != "":
		return "${1:" + complSnippetEscape(p.Default) + "}"
	case p.Type == "string":
		return `"$1"`
	case p.Type == "array":
		return "[$1]"
	case p.Type == "object":
		return "{$1}"
	}
	return "$1"
}

func complSnippetEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `$`, `\$`, `}`, `\}`).Replace(s)
}

func complChoiceEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `$`, `\$`, `}`, `\}`, `,`, `\,`, `|`, `\|`).Replace(s)
}

func complQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// complSort orders preferred entries first, then by name.
func complSort(first bool, name string) string {
	if first {
		return "0_" + name
	}
	return "1_" + name
}

// complCandidate is one value to offer.
type complCandidate struct {
	value  string
	detail string
	doc    string
	sort   string
	kind   protocol.CompletionItemKind
}

// values: what may go in the value under the cursor.
func (c *complBuilder) values() ([]protocol.CompletionItem, bool) {
	site := c.site
	keys := complKeys(site.path)
	inArray := site.array != nil
	var cands []complCandidate
	wantArray := false // the property is an array of ids
	switch {
	case c.f.Kind == store.KindTask && slices.Equal(keys, []string{"blockedBy"}) && len(site.path) == 1:
		wantArray = true
		cands = c.taskRefs()
	case c.f.Kind == store.KindEpic && slices.Equal(keys, []string{"children", "id"}) && len(site.path) == 3 && !inArray:
		cands = c.childIDs()
	case c.f.Kind == store.KindEpic && slices.Equal(keys, []string{"children", "blockedBy"}) && len(site.path) == 3:
		wantArray = true
		cands = c.childRefs()
	case c.f.Kind == store.KindStory && slices.Equal(keys, []string{"epic"}) && len(site.path) == 1 && !inArray:
		cands = c.epicIDs()
	default:
		if inArray {
			return nil, false
		}
		p, ok := c.schemas.Lookup(c.kind, schema.InstancePath(site.path))
		if !ok || len(p.Enum) == 0 {
			return nil, false
		}
		cands = complEnum(p)
	}
	src := c.f.Doc.Src
	quoted := site.start < site.end && src[site.start] == '"'
	wrap := wantArray && !inArray // `"blockedBy": |` gets a whole array
	items := make([]protocol.CompletionItem, 0, len(cands))
	for _, cd := range cands {
		q := complQuote(cd.value)
		text := q
		if wrap {
			text = "[" + q + "]"
		}
		item := protocol.CompletionItem{
			Label:            cd.value,
			Kind:             cd.kind,
			InsertTextFormat: protocol.InsertTextFormatPlainText,
			TextEdit:         &protocol.TextEdit{Range: spanRange(c.f, site.start, site.end), NewText: text + site.suffix},
		}
		if cd.detail != "" {
			item.Detail = protocol.NewOptional(cd.detail)
		}
		if cd.doc != "" {
			item.Documentation = &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: cd.doc}
		}
		if cd.sort != "" {
			item.SortText = protocol.NewOptional(cd.sort)
		}
		if quoted {
			item.FilterText = protocol.NewOptional(q)
		}
		items = append(items, item)
	}
	return items, true
}

// listed returns the string elements of the array being completed, but the
// one under the cursor.
func (c *complBuilder) listed() map[string]bool {
	out := map[string]bool{}
	if a := c.site.array; a != nil {
		for i, e := range a.Elems() {
			if i != c.site.elem && e != nil && e.Kind == jsonc.String {
				out[e.Str()] = true
			}
		}
	}
	return out
}

// complDependents returns every id that (transitively) lists id in its
// blockedBy: making id blocked by one of them would close a cycle.
func complDependents(id string, blockedBy map[string][]string) map[string]bool {
	rev := map[string][]string{}
	for from, tos := range blockedBy {
		for _, to := range tos {
			rev[to] = append(rev[to], from)
		}
	}
	seen := map[string]bool{}
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, d := range rev[cur] {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	return seen
}

// taskRefs: sibling tasks that may block this one.
func (c *complBuilder) taskRefs() []complCandidate {
	st := c.snap.WS.StoryOf(c.f)
	if st == nil {
		return nil
	}
	self := c.f.Name
	graph := map[string][]string{}
	for _, t := range st.Tasks {
		for _, r := range t.BlockedBy {
			graph[t.ID] = append(graph[t.ID], r.ID)
		}
	}
	// The buffer's own edges count, even if the model holds another version.
	if c.f.Task != nil {
		graph[self] = complRefIDs(c.f.Task.BlockedBy)
	}
	dependents := complDependents(self, graph)
	listed := c.listed()
	var out []complCandidate
	for _, t := range st.Tasks {
		if t.ID == self || listed[t.ID] || dependents[t.ID] {
			continue
		}
		cd := complCandidate{value: t.ID, detail: t.Subject, kind: protocol.CompletionItemKindReference}
		if t.Status != "" {
			cd.doc = "Status: `" + t.Status + "`"
		}
		out = append(out, cd)
	}
	return out
}

func complRefIDs(rs []store.Ref) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// childIndex is the index of the children[] entry the cursor is in.
func (c *complBuilder) childIndex() int {
	if p := c.site.path; len(p) >= 2 && p[0].Key == "children" && p[1].Index >= 0 {
		return p[1].Index
	}
	return -1
}

// childIDs: story folders not yet listed in the epic, its own prefix first.
func (c *complBuilder) childIDs() []complCandidate {
	epic := c.f.Name
	listed := map[string]bool{}
	if arr := c.f.Root().Get("children"); arr != nil && arr.Kind == jsonc.Array {
		cur := c.childIndex()
		for i, e := range arr.Elems() {
			if id := e.Get("id"); i != cur && id != nil && id.Kind == jsonc.String {
				listed[id.Str()] = true
			}
		}
	}
	var out []complCandidate
	for _, id := range c.snap.WS.SortedStoryIDs() {
		if listed[id] {
			continue
		}
		st := c.snap.WS.Story(id)
		cd := complCandidate{value: id, detail: st.Title, kind: protocol.CompletionItemKindModule,
			sort: complSort(strings.HasPrefix(id, epic+"--"), id)}
		if e := st.EpicID(); e != "" && e != epic {
			cd.doc = "Belongs to epic `" + e + "`."
		}
		out = append(out, cd)
	}
	return out
}

// childRefs: sibling children that may block the child under the cursor.
func (c *complBuilder) childRefs() []complCandidate {
	e := c.f.Epic
	if e == nil {
		return nil
	}
	self := ""
	if i := c.childIndex(); i >= 0 {
		if arr := c.f.Root().Get("children"); arr != nil && arr.Kind == jsonc.Array && i < len(arr.Elems()) {
			if id := arr.Elems()[i].Get("id"); id != nil && id.Kind == jsonc.String {
				self = id.Str()
			}
		}
	}
	graph := map[string][]string{}
	for _, ch := range e.Children {
		graph[ch.ID] = append(graph[ch.ID], complRefIDs(ch.BlockedBy)...)
	}
	dependents := map[string]bool{}
	if self != "" {
		dependents = complDependents(self, graph)
	}
	listed := c.listed()
	seen := map[string]bool{}
	var out []complCandidate
	for _, ch := range e.Children {
		id := ch.ID
		if seen[id] || id == self || listed[id] || dependents[id] {
			continue
		}
		seen[id] = true
		cd := complCandidate{value: id, kind: protocol.CompletionItemKindReference}
		if st := c.snap.WS.Story(id); st != nil {
			cd.detail = st.Title
		}
		out = append(out, cd)
	}
	slices.SortFunc(out, func(a, b complCandidate) int { return strings.Compare(a.value, b.value) })
	return out
}

// epicIDs: the epics a story may belong to; the one its name implies first.
func (c *complBuilder) epicIDs() []complCandidate {
	implied := store.EpicOf(c.f.Owner)
	var out []complCandidate
	for _, id := range c.snap.WS.SortedEpicIDs() {
		cd := complCandidate{value: id, kind: protocol.CompletionItemKindModule, sort: complSort(id == implied, id)}
		if e := c.snap.WS.Epic(id); e != nil {
			cd.detail = e.Title
		}
		out = append(out, cd)
	}
	return out
}

// complValueDocs explains the enum values of status and priority.
var complValueDocs = map[string]string{
	"pending":     "Not started yet.",
	"in_progress": "Being worked on now.",
	"completed":   "Done.",
	"critical":    "Runs first within its wave.",
	"high":        "Runs before medium and low within its wave.",
	"medium":      "Runs before low within its wave.",
	"low":         "Runs last within its wave (before unset).",
}

// complEnum offers a property's allowed values in schema order.
func complEnum(p schema.Property) []complCandidate {
	out := make([]complCandidate, len(p.Enum))
	for i, v := range p.Enum {
		out[i] = complCandidate{value: v, detail: complValueDocs[v], doc: p.Description,
			sort: strconv.Itoa(i), kind: protocol.CompletionItemKindEnumMember}
	}
	return out
}
