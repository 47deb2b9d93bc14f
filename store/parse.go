package store

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/schema"
)

// Parser turns file bytes into Files with their local diagnostics. It is
// immutable and safe for concurrent use.
type Parser struct {
	schemas *schema.Set
}

// NewParser compiles the schemas.
func NewParser() (*Parser, error) {
	s, err := schema.New()
	if err != nil {
		return nil, fmt.Errorf("compile schemas: %w", err)
	}
	return &Parser{schemas: s}, nil
}

// Schemas returns the compiled schema set (for hover and completion).
func (p *Parser) Schemas() *schema.Set { return p.schemas }

// Unreadable builds the File for a file that could not be read: one
// unreadable-file diagnostic saying why and what to do.
func Unreadable(rel, why string) *File {
	kind, owner, name := Classify(rel)
	f := &File{Rel: rel, Kind: kind, Owner: owner, Name: name, Version: -1, ReadErr: why}
	f.Local = []Diagnostic{{File: rel, Severity: SeverityError, Code: CodeUnreadableFile, Message: why}}
	return f
}

// Misplaced builds the File for something where SAGA never reads (see
// KindMisplaced): one misplaced-file warning saying where it belongs. Its
// content does not matter, so it is not kept.
func Misplaced(rel string) *File {
	kind, owner, name := Classify(rel)
	f := &File{Rel: rel, Kind: kind, Owner: owner, Name: name, Version: -1}
	var msg string
	switch rel {
	case ".saga/story":
		msg = "SAGA never reads .saga/story/: did you mean .saga/stories/? Move its story folders there"
	case ".saga/epic":
		msg = "SAGA never reads .saga/epic/: did you mean .saga/epics/? Move its epics there"
	default:
		msg = fmt.Sprintf("SAGA never reads %s: a story is a folder, .saga/stories/<story>/ with story.json and one file per task; move it to %s (a story) or into its story's folder (a task)",
			rel, StoryFileRel(name))
	}
	f.Local = []Diagnostic{{File: rel, Severity: SeverityOf(CodeMisplacedFile), Code: CodeMisplacedFile, Message: msg}}
	return f
}

// Parse parses src as the file at rel. version is the editor's document
// version, or -1 for disk. The File keeps src and its strings alias it: src
// must not be modified afterwards.
func (p *Parser) Parse(rel string, src []byte, version int32) *File {
	return p.parse(rel, src, version, nil)
}

// parse is Parse taking the tree from batch when it is not nil.
func (p *Parser) parse(rel string, src []byte, version int32, batch *jsonc.Batch) *File {
	kind, owner, name := Classify(rel)
	if kind == KindMisplaced {
		f := Misplaced(rel)
		f.Version = version
		return f
	}
	if len(src) > filesafe.MaxFileSize {
		f := Unreadable(rel, fmt.Sprintf("%s is %.1f MB, over the %d MB limit for SAGA files; move it out of .saga/ or split it",
			rel, float64(len(src))/(1<<20), filesafe.MaxFileSize>>20))
		f.Version = version
		return f
	}
	if i := bytes.IndexByte(src[:min(len(src), 8192)], 0); i >= 0 {
		f := Unreadable(rel, rel+" is a binary file (NUL bytes); SAGA files are UTF-8 JSON: move it out of .saga/")
		f.Version = version
		return f
	}
	f := &File{Rel: rel, Kind: kind, Owner: owner, Name: name, Version: version, Src: src}
	if kind == KindJournal {
		return f // Markdown: never parsed as JSON
	}
	if batch != nil { // File.Src is never modified
		f.Doc = batch.ParseOwned(src)
	} else {
		f.Doc = jsonc.ParseOwned(src)
	}
	b := diagBuilder{f: f}
	for _, e := range f.Doc.Errors {
		b.add(CodeJSONSyntax, e.Start, e.End, e.Message, nil)
	}
	if kind == KindOther || kind == KindJournal {
		return f
	}
	root := f.Doc.Root
	sk, _ := kind.Schema()
	if root != nil {
		p.validate(&b, sk, root, len(f.Doc.Errors) > 0)
	}
	obj := f.Root()
	switch kind {
	case KindTask:
		f.Task = extractTask(f, obj)
		b.checkName(obj, f.Task.IDValue, name, false, "task", "file", path.Base(rel)) // name+".json", not built per file
		b.blankChecks(obj)
		b.badPaths(obj)
	case KindStory:
		f.Story = extractStory(f, obj)
		b.checkName(obj, f.Story.IDValue, name, true, "story", "folder", name)
	case KindEpic:
		f.Epic = extractEpic(f, obj)
		b.checkName(obj, f.Epic.IDValue, name, false, "epic", epicContainer(rel), name)
	}
	return f
}

func epicContainer(rel string) string {
	if strings.HasSuffix(rel, "/epic.json") {
		return "folder"
	}
	return "file"
}

// validate maps schema violations onto source ranges.
func (p *Parser) validate(b *diagBuilder, k schema.Kind, root *jsonc.Node, hasSyntaxErrors bool) {
	for _, v := range p.schemas.Validate(k, root) {
		node := v.Node
		switch v.Keyword {
		case "required":
			// While a document is half typed, a member may just be unparsable:
			// the syntax error already says what is wrong.
			if hasSyntaxErrors {
				continue
			}
			b.add(CodeSchema, node.Start(), node.Start()+1, v.Message, &Fix{Property: v.Property})
		case "additionalProperties":
			msg := fmt.Sprintf("unknown property %q is not part of the %s format and is ignored", v.Property, k)
			near := nearestProperty(v.Property, p.schemas.Properties(k, v.Path))
			if near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			b.add(CodeUnknownProperty, v.At.Start(), v.At.End(), msg, &Fix{Property: v.Property, Want: near})
		case "pattern":
			if node.Kind != jsonc.String {
				b.add(CodeSchema, node.Start(), node.End(), v.Message, nil)
				continue
			}
			canonical := isCanonicalPath(k, v.Path)
			b.add(CodeInvalidID, node.Start(), node.End(), invalidIDMessage(node.Str(), canonical),
				&Fix{Want: Slugify(node.Str(), canonical)})
		case "uniqueItems":
			b.add(CodeSchema, v.At.Start(), v.At.End(), "repeated entry: "+v.Message, nil) // on the repeat, not the whole list
		default:
			b.add(CodeSchema, node.Start(), node.End(), v.Message, nil)
		}
	}
}

// isCanonicalPath tells whether the value at path is a canonical story name
// (which may contain "--") rather than an individual id.
func isCanonicalPath(k schema.Kind, path []string) bool {
	switch k {
	case schema.Story:
		return len(path) == 1 && path[0] == "id"
	case schema.Epic:
		return len(path) >= 2 && path[0] == "children"
	}
	return false
}

func invalidIDMessage(v string, canonical bool) string {
	if canonical {
		return fmt.Sprintf("%q is not a valid canonical name: use lowercase ids of letters, digits and single dashes, joined by \"--\" (e.g. user-auth--setup-db)", v)
	}
	return fmt.Sprintf("%q is not a valid id: use lowercase letters, digits and single dashes (e.g. write-tests); \"--\" is reserved for the story hierarchy", v)
}

// checkName reports an id that differs from the name its file or folder gives.
func (b *diagBuilder) checkName(obj *jsonc.Node, idValue, name string, canonical bool, what, container, containerName string) {
	idNode := obj.Get("id")
	if idNode == nil || idNode.Kind != jsonc.String {
		return
	}
	valid := ValidID(name)
	if canonical {
		valid = ValidCanonical(name)
	}
	if !valid {
		if idValue == name {
			return // the id itself fails the pattern: invalid-id is already reported on it
		}
		want := Slugify(name, canonical)
		b.add(CodeInvalidID, idNode.Start(), idNode.End(),
			fmt.Sprintf("the %s name %q is not a valid %s id; rename the %s to %q", container, containerName, what, container, want), nil)
		return
	}
	if idValue != name {
		b.add(CodeIDMismatch, idNode.Start(), idNode.End(),
			fmt.Sprintf("%s id %q does not match its %s name %q", what, idValue, container, containerName),
			&Fix{Want: name})
	}
}

func nearestProperty(name string, props []schema.Property) string {
	best, bestD := "", 3 // suggest only close typos
	for _, p := range props {
		if d := editDistance(strings.ToLower(name), strings.ToLower(p.Name), bestD); d < bestD {
			best, bestD = p.Name, d
		}
	}
	return best
}

// distances measures Levenshtein distances from one string, for comparing
// it with many (a mistyped reference with every known name): Myers' bit-
// parallel algorithm, one machine word per compared byte, for strings of up
// to 64 bytes; longer ones fall back to editDistance.
type distances struct {
	from string
	peq  [256]uint64 // for each byte value, the positions of from holding it
}

func newDistances(from string) *distances {
	d := &distances{from: from}
	if len(from) <= 64 {
		for i := 0; i < len(from); i++ {
			d.peq[from[i]] |= 1 << i
		}
	}
	return d
}

// to is the Levenshtein distance from d.from to b when it is below limit,
// and some value at least limit otherwise (editDistance's contract).
func (d *distances) to(b string, limit int) int {
	m := len(d.from)
	if m == 0 || m > 64 {
		return editDistance(d.from, b, limit)
	}
	if diff := m - len(b); diff >= limit || -diff >= limit {
		return limit
	}
	pv, mv, score, last := ^uint64(0), uint64(0), m, uint64(1)<<(m-1)
	for j := 0; j < len(b); j++ {
		eq := d.peq[b[j]]
		xv := eq | mv
		xh := (((eq & pv) + pv) ^ pv) | eq
		ph := mv | ^(xh | pv)
		mh := pv & xh
		if ph&last != 0 {
			score++
		} else if mh&last != 0 {
			score--
		}
		ph = ph<<1 | 1
		mh <<= 1
		pv = mh | ^(xv | ph)
		mv = ph & xv
	}
	return score
}

// editDistance is the Levenshtein distance of a and b when it is below
// limit, and some value at least limit otherwise: a row whose every cell
// reached limit ends the count. It does not allocate, so suggesting a name
// for each of 60,000 unknown references stays cheap.
func editDistance(a, b string, limit int) int {
	if len(a) > 64 || len(b) > 64 {
		return max(limit, 99)
	}
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	var prevRow, curRow [65]int
	prev, cur := prevRow[:len(b)+1], curRow[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// diagBuilder adds diagnostics to one file, converting byte offsets to LSP
// positions.
type diagBuilder struct{ f *File }

func (b *diagBuilder) add(code Code, start, end int, msg string, fix *Fix) {
	b.f.Local = append(b.f.Local, newDiagnostic(b.f, code, start, end, msg, fix))
}

func newDiagnostic(f *File, code Code, start, end int, msg string, fix *Fix) Diagnostic {
	d := Diagnostic{File: f.Rel, Start: start, End: end, Severity: SeverityOf(code), Code: code, Message: msg, Fix: fix}
	if f.Doc != nil {
		d.Range = SpanRange(f.Doc, start, end)
	}
	return d
}

// str reads a string member, "" when absent or not a string.
func str(obj *jsonc.Node, key string) string {
	if n := obj.Get(key); n != nil && n.Kind == jsonc.String {
		return n.Str()
	}
	return ""
}

// refs reads an array of strings, skipping what is not a string.
func refs(obj *jsonc.Node, key string) []Ref {
	arr := obj.Get(key)
	if arr == nil || arr.Kind != jsonc.Array {
		return nil
	}
	out := make([]Ref, 0, len(arr.Elems()))
	for _, e := range arr.Elems() {
		if e != nil && e.Kind == jsonc.String {
			out = append(out, Ref{ID: e.Str(), Node: e})
		}
	}
	return out
}

func extractTask(f *File, obj *jsonc.Node) *Task {
	t := &Task{
		ID: f.Name, IDValue: str(obj, "id"), Subject: str(obj, "subject"), Description: str(obj, "description"),
		ActiveForm: str(obj, "activeForm"), Status: str(obj, "status"), Priority: str(obj, "priority"),
		Guidance: str(obj, "guidance"), DoneWhen: str(obj, "doneWhen"), BlockedBy: refs(obj, "blockedBy"), File: f,
	}
	t.Checks, t.CheckTimeout = TaskChecks(obj)
	t.Paths = TaskPaths(obj)
	t.Review = reviewSource(obj.Get("review"))
	return t
}

// reviewSource reads a task's "review" object; one without a key is none
// (the schema reports it).
func reviewSource(n *jsonc.Node) *ReviewSource {
	if n == nil || n.Kind != jsonc.Object || str(n, "key") == "" {
		return nil
	}
	r := &ReviewSource{Key: str(n, "key"), Kind: str(n, "kind"), URL: str(n, "url"), Path: str(n, "path"), UpdatedAt: str(n, "updatedAt")}
	for _, a := range refs(n, "authors") {
		r.Authors = append(r.Authors, a.ID)
	}
	if l := n.Get("line"); l != nil && l.Kind == jsonc.Number {
		if v, err := strconv.Atoi(l.Raw()); err == nil && v >= 1 {
			r.Line = v
		}
	}
	return r
}

func extractStory(f *File, obj *jsonc.Node) *Story {
	s := &Story{
		ID: f.Owner, IDValue: str(obj, "id"), Title: str(obj, "title"), Description: str(obj, "description"),
		Guidance: str(obj, "guidance"), DoneWhen: str(obj, "doneWhen"), Avoid: str(obj, "avoid"),
		Status: str(obj, "status"), Epic: str(obj, "epic"), Branch: str(obj, "branch"), PR: str(obj, "pr"),
		Worktree: str(obj, "worktree"), File: f,
	}
	if n := obj.Get("epic"); n != nil && n.Kind == jsonc.String {
		s.EpicNode = n
	}
	return s
}

func extractEpic(f *File, obj *jsonc.Node) *Epic {
	e := &Epic{ID: f.Name, IDValue: str(obj, "id"), Title: str(obj, "title"), Description: str(obj, "description"),
		Status: str(obj, "status"), File: f}
	arr := obj.Get("children")
	if arr == nil || arr.Kind != jsonc.Array {
		return e
	}
	if len(arr.Elems()) > 0 {
		e.Children = make([]Child, 0, len(arr.Elems()))
	}
	for _, c := range arr.Elems() {
		if c == nil || c.Kind != jsonc.Object {
			continue
		}
		idn := c.Get("id")
		if idn == nil || idn.Kind != jsonc.String {
			continue
		}
		e.Children = append(e.Children, Child{ID: idn.Str(), Node: idn, Object: c, BlockedBy: refs(c, "blockedBy")})
	}
	return e
}
