package lsp

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestArchives runs the LSP feature cases written as data,
// testdata/<feature>/*.txtar. An archive's leading comment says what it pins;
// its files but "want" are a workspace, written into a temp dir, and a server
// is started on it over pipes and initialized with capsFull (and, the first
// time a line needs other client capabilities, a second one with them). Every
// line of "want" is then one request and its expected answer, run in order on
// that server as a subtest named after its line number. A file a request is
// made in is opened (didOpen with its text on disk, or the buffer an open line
// gave it) the first time; expected locations are read from disk without
// opening their files. At the end the workspace on disk must still be the
// archive's: requests never write. The verbs are read here and in
// archive_{completion,symbols,code_action}_test.go, the line language's
// words in archive_lang_test.go.
//
// A line is `<request> => <expected>`, or one that changes the session for
// the lines after it; blank lines and # comments are left out. Texts,
// needles, labels and names are Go string literals: "Status: `done`", or
// between backquotes when they hold double quotes: `"add-item"`.
//
//	place = <file> <needle>[#n][+off]  n-th (0-based) needle in file, off bytes into it
//	span  = <file> <needle>[#n]        the range of the n-th needle in file
//
//	definition <place> => null | <span>
//	hover <place> => null | ~ <text>, !~ <text>, …   markdown containing (~) or not
//	                                                containing (!~) each text, with
//	                                                the needle's range
//	references <place> => null | [] | <span>, <span>, …   in the server's order
//	references+declaration <place> => …              includeDeclaration: true
//	prepareRename <place> => placeholder <name> range <text>  (the text the range covers)
//	prepareRename <place> => refused                 null, or an error saying what
//	                                                can be renamed
//	rename <place> <name> => error ~ <text>          an error containing text
//	rename <place> <name> => {}                      a workspace edit changing nothing
//	diagnostics <file> => <L:C-L:C> <code>, …        the first diagnostics published
//	                                                for the file (not open) after
//	                                                initialize, in any order; 1-based
//	                                                lines and UTF-16 columns
//	line-ends <file> => crlf                         every line of the file ends in \r\n
//	completion <place> => null
//	completion <place> => offers|exactly <label>, …[; not <label>, …]
//	                              the list offers these labels (exactly: and no
//	                              other) and not those; every answer must be a
//	                              complete list, each label once, each item with
//	                              a textEdit
//	completion-item <place> <label> => <clause> …   the item, offered, has
//	    newText <text>            its textEdit's text
//	    range +a..+b              its textEdit's range, in bytes from the start
//	                              of the place's needle in the buffer
//	    plain | snippet           its insertTextFormat
//	    sort <text>, detail <text>, filter <text>   sortText, detail, filterText
//	    comma-after <text>        its one additionalTextEdit inserts "," right
//	                              after the first text in the buffer; without
//	                              this clause it must have none
//	documentSymbol <file> => [] | <symbol>, …       the symbols, in order, a
//	    symbol: [>…] <kind> <name> <detail> [sel <needle>[#n]] [range *|<needle>[#n]]
//	                              one > per level below the top (a symbol's
//	                              children follow it); kind an LSP name (Module,
//	                              Class, Property, Function, Key); sel defaults
//	                              to the quoted name, range to sel, * is the
//	                              whole document. Checked on two servers: as a
//	                              DocumentSymbol tree for a client with
//	                              hierarchical support, and flattened into
//	                              SymbolInformation (containerName the parent,
//	                              location the range) for capsFull, which has
//	                              none
//	workspaceSymbol <query> => [] | <name> [<kind> <file> [in <container>]], …
//	                              the whole answer in order; with a kind, also
//	                              its container (none without in) and location,
//	                              the quoted name's first place in the file
//	codeLens <file> => [] | <needle>[#n] <title> [<command> <arguments>], …
//	                              the lenses in order, each on its needle: an
//	                              informational one (an empty command id, no
//	                              arguments) or one running command with the
//	                              arguments (JSON)
//	codeAction <file> <code>[ weak] [only <kind>, …] => [] | <kind> <title> [preferred], …
//	                              the file opened, the first diagnostic with
//	                              code published for it (weak: the one whose fix
//	                              is a cycle's weakest link) in the context and
//	                              its range asked about: the actions in order
//	                              (but Run story), isPreferred as said, each
//	                              quick fix carrying that diagnostic
//
// A request in a file neither on disk nor given a buffer by an open line
// fails its line, but for documentSymbol and codeLens, which ask about it
// unopened.
//
// Lines that change the session:
//
//	open <file> replace <old> <new>   the file's buffer (on every server) is its
//	                                  disk text with the first old made new
//	open <file> text <text>           … is text
//	open <file> empty                 … is empty
//	open <file>                       no buffer of its own: only what every open
//	                                  line does first, the buffer the one before
//	                                  gave goes back to disk (didClose), so one
//	                                  buffer at most differs from disk
//	client default|snippets           the completion lines after it run on a
//	                                  server whose client has capsFull (default)
//	                                  plus snippet support
//
// A malformed line fails its subtest; a failure quotes the archive and the
// line of its want file.
func TestArchives(t *testing.T) {
	testkit.RunArchives(t, "testdata/*/*.txtar", func(t *testing.T, files map[string]string) {
		want, ok := files["want"]
		if !ok {
			t.Fatal("the archive has no want file")
		}
		s := newArchiveSession(t, archiveRoot(t, files))
		archive := t.Name()
		for i, line := range strings.Split(want, "\n") {
			for _, line := range testkit.Expectations(line) {
				t.Run(fmt.Sprintf("line %d", i+1), func(t *testing.T) {
					t.Cleanup(func() {
						if t.Failed() {
							t.Logf("%s.txtar, line %d of want: %s", strings.TrimPrefix(archive, "TestArchives/"), i+1, line)
						}
					})
					s.run(t, line)
				})
			}
		}
		checkWorkspaceUnchanged(t, s.c.root, files)
	})
}

// archiveRoot writes the files of an archive but "want" into a new temp dir
// (its symlinks resolved: the path the server sees) and returns it.
func archiveRoot(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := maps.Clone(files)
	delete(ws, "want")
	testkit.WriteFiles(t, root, ws)
	return root
}

// checkWorkspaceUnchanged fails unless the files under root are those of the
// archive (but "want"), byte for byte.
func checkWorkspaceUnchanged(t *testing.T, root string, files map[string]string) {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		found[rel] = true
		if want, ok := files[rel]; !ok || rel == "want" {
			t.Errorf("%s appeared in the workspace", rel)
		} else if got := testkit.ReadFile(t, p); got != want {
			t.Errorf("%s changed on disk:\n%s", rel, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range files {
		if rel != "want" && !found[rel] {
			t.Errorf("%s is gone from the workspace", rel)
		}
	}
}

// archiveSession is a workspace and the servers on it: one per set of client
// capabilities a line asks for (capsFull, plus snippet support or
// hierarchical document symbols), each started the first time it is needed.
// A file is opened on a server (didOpen) the first time a request is made in
// it there; an open line gives one file a buffer that differs from disk, on
// every server.
type archiveSession struct {
	t       *testing.T // the archive's: the servers live as long as it
	c       *client    // the server with capsFull
	client  string     // the capabilities lines are sent with (a client line)
	clients map[string]*archiveClient
	// changed is the file an open line gave a buffer, and buffer its text.
	changed, buffer string
}

// archiveClient is one server of a session and the text of each file open
// on it.
type archiveClient struct {
	c       *client
	opened  map[string]string
	version map[string]int
}

// archiveCaps are the client capabilities of a session's server, added to
// capsFull: default (none), snippets (a client line) or hierarchical (for
// documentSymbol).
func archiveCaps(name string) string {
	switch name {
	case "snippets":
		return snippetCaps
	case "hierarchical":
		return hierarchicalSymbolCaps
	}
	return "{}"
}

func newArchiveSession(t *testing.T, root string) *archiveSession {
	t.Helper()
	c := startOn(t, root, capsFull)
	return &archiveSession{t: t, c: c, client: "default", clients: map[string]*archiveClient{
		"default": {c: c, opened: map[string]string{}, version: map[string]int{}},
	}}
}

// startArchive is a session on the workspace of the archive at path.
func startArchive(t *testing.T, path string) *archiveSession {
	t.Helper()
	return newArchiveSession(t, archiveWorkspace(t, path))
}

// archiveWorkspace is a temp dir holding the workspace of the archive at
// path: the Go tests of what a line cannot say run on it.
func archiveWorkspace(t *testing.T, path string) string {
	t.Helper()
	return archiveRoot(t, testkit.ReadArchive(t, path))
}

// on is the server with the named capabilities, started if need be.
func (s *archiveSession) on(name string) *archiveClient {
	if ac, ok := s.clients[name]; ok {
		return ac
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal([]byte(capsFull), &caps); err != nil {
		s.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(archiveCaps(name)), &caps); err != nil {
		s.t.Fatal(err)
	}
	merged, _ := json.Marshal(caps)
	ac := &archiveClient{c: startOn(s.t, s.c.root, string(merged)), opened: map[string]string{}, version: map[string]int{}}
	s.clients[name] = ac
	if s.changed != "" {
		ac.sync(s.changed, s.buffer)
	}
	return ac
}

// sync makes rel's buffer on the server text: opened, or changed as a whole.
func (ac *archiveClient) sync(rel, text string) {
	if old, ok := ac.opened[rel]; !ok {
		ac.c.openText(rel, text, 1)
		ac.version[rel] = 1
	} else if old != text {
		ac.version[rel]++
		ac.c.didChange(rel, ac.version[rel], wholeText(text))
	}
	ac.opened[rel] = text
}

// text opens rel (once) on the default server and returns its text; a
// missing file fails t.
func (s *archiveSession) text(t *testing.T, rel string) string {
	t.Helper()
	return s.textOn(t, s.clients["default"], rel)
}

// textOn is rel's buffer, opened on ac if it is not yet: the open line's
// text, or the file's on disk.
func (s *archiveSession) textOn(t *testing.T, ac *archiveClient, rel string) string {
	t.Helper()
	if rel == s.changed {
		return s.buffer
	}
	if text, ok := ac.opened[rel]; ok {
		return text
	}
	text := navDisk(t, s.c, rel)
	ac.sync(rel, text)
	return text
}

// open reads `open <file> [replace <old> <new> | text <text> | empty]`: the
// file's buffer becomes its disk text with the first old replaced by new,
// the text, or empty, on every server; the buffer an open line changed
// before closes (back to disk). `open <file>` alone only closes that one.
func (s *archiveSession) open(t *testing.T, l *wantLine) {
	rel := l.word("a file")
	var text string
	changed := true
	switch {
	case l.maybe("replace"):
		old, repl := l.literal("the text to replace"), l.literal("its replacement")
		text = navDisk(t, s.c, rel)
		if !strings.Contains(text, old) {
			t.Fatalf("%s does not contain %q", rel, old)
		}
		text = strings.Replace(text, old, repl, 1)
	case l.maybe("text"):
		text = l.literal("the buffer's text")
	case l.maybe("empty"):
	default:
		changed = false
	}
	l.end()
	if s.changed != "" {
		for _, ac := range s.clients {
			if _, ok := ac.opened[s.changed]; ok {
				ac.c.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, ac.c.uri(s.changed)))
				delete(ac.opened, s.changed)
			}
		}
		s.changed, s.buffer = "", ""
	}
	if changed {
		s.changed, s.buffer = rel, text
		for _, ac := range s.clients {
			ac.sync(rel, text)
		}
	}
}

// clientLine reads `client <name>`: the capabilities of the server the
// next lines are sent to.
func (s *archiveSession) clientLine(l *wantLine) {
	name := l.word("a client")
	if name != "default" && name != "snippets" {
		l.malformed("unknown client %q (want default or snippets)", name)
	}
	l.end()
	s.client = name
}

// run parses line whole, then sends its request and checks the answer.
func (s *archiveSession) run(t *testing.T, line string) {
	l := &wantLine{t: t, rest: line}
	switch verb := l.word("a request"); verb {
	case "definition":
		s.definition(t, l)
	case "hover":
		s.hover(t, l)
	case "references", "references+declaration":
		s.references(t, l, verb == "references+declaration")
	case "prepareRename":
		s.prepareRename(t, l)
	case "rename":
		s.rename(t, l)
	case "diagnostics":
		s.diagnostics(t, l)
	case "line-ends":
		s.lineEnds(t, l)
	case "open":
		s.open(t, l)
	case "client":
		s.clientLine(l)
	case "completion":
		s.completion(t, l)
	case "completion-item":
		s.completionItem(t, l)
	case "documentSymbol":
		s.documentSymbol(t, l)
	case "workspaceSymbol":
		s.workspaceSymbol(t, l)
	case "codeLens":
		s.codeLens(t, l)
	case "codeAction":
		s.codeAction(t, l)
	default:
		l.malformed("unknown request %q", verb)
	}
}

func (s *archiveSession) lineEnds(t *testing.T, l *wantLine) {
	rel := l.word("a file")
	l.arrow()
	l.keyword("crlf")
	l.end()
	text := navDisk(t, s.c, rel)
	if n := strings.Count(text, "\n"); n == 0 || n != strings.Count(text, "\r\n") {
		t.Fatalf("%s lost its CRLF line ends (check .gitattributes / core.autocrlf)", rel)
	}
}

// place is a position in a file: the n-th needle, off bytes into it.
type place struct {
	rel, needle string
	n, off      int
}

func (s *archiveSession) position(t *testing.T, p place) string {
	t.Helper()
	return at(t, s.text(t, p.rel), p.needle, p.n, p.off)
}

func (s *archiveSession) definition(t *testing.T, l *wantLine) {
	p := l.place()
	l.arrow()
	var want []navLocation // nil: null
	if !l.maybe("null") {
		want = []navLocation{s.location(t, l.span())}
	}
	l.end()
	got := navDefinition(t, s.c, p.rel, s.position(t, p))
	if (want == nil) != (got == nil) || !slices.Equal(got, want) {
		t.Fatalf("definition\n got %s\nwant %s", navShow(s.c, got), navShow(s.c, want))
	}
}

func (s *archiveSession) hover(t *testing.T, l *wantLine) {
	p := l.place()
	l.arrow()
	null := l.maybe("null")
	var has, lacks []string
	for more := !null; more; more = l.maybe(",") {
		switch l.word("~ or !~") {
		case "~":
			has = append(has, l.literal("a text"))
		case "!~":
			lacks = append(lacks, l.literal("a text"))
		default:
			l.malformed("want ~ or !~ before a text")
		}
	}
	l.end()
	h := navHover(t, s.c, p.rel, s.position(t, p))
	if null {
		if h != nil {
			t.Fatalf("want null, got %q", h.Contents.Value)
		}
		return
	}
	if h == nil {
		t.Fatal("hover is null")
	}
	if h.Contents.Kind != "markdown" {
		t.Errorf("kind %q, want markdown", h.Contents.Kind)
	}
	for _, w := range has {
		if !strings.Contains(h.Contents.Value, w) {
			t.Errorf("hover lacks %q:\n%s", w, h.Contents.Value)
		}
	}
	for _, w := range lacks {
		if strings.Contains(h.Contents.Value, w) {
			t.Errorf("hover has %q:\n%s", w, h.Contents.Value)
		}
	}
	if want := spanOf(t, s.text(t, p.rel), p.needle, p.n); h.Range == nil || *h.Range != want {
		t.Errorf("range %+v, want %+v", h.Range, want)
	}
}

func (s *archiveSession) references(t *testing.T, l *wantLine, decl bool) {
	p := l.place()
	l.arrow()
	var want []navLocation // nil: null
	switch {
	case l.maybe("null"):
	case l.maybe("[]"):
		want = []navLocation{}
	default:
		for more := true; more; more = l.maybe(",") {
			want = append(want, s.location(t, l.span()))
		}
	}
	l.end()
	got := navReferences(t, s.c, p.rel, s.position(t, p), decl)
	if (want == nil) != (got == nil) || !slices.Equal(got, want) {
		t.Fatalf("references\n got %s\nwant %s", navShow(s.c, got), navShow(s.c, want))
	}
}

func (s *archiveSession) prepareRename(t *testing.T, l *wantLine) {
	p := l.place()
	l.arrow()
	var placeholder, covers string
	refused := l.maybe("refused")
	if !refused {
		l.keyword("placeholder") // or refused
		placeholder = l.literal("a placeholder")
		l.keyword("range")
		covers = l.literal("the text the range covers")
	}
	l.end()
	m := s.c.call("textDocument/prepareRename", navParams(s.c, p.rel, s.position(t, p), ""))
	if refused {
		checkRenameRefused(t, m)
		return
	}
	if m.Error != nil {
		t.Fatalf("prepareRename: %s", m.Error.Message)
	}
	var res struct {
		Range       lspRange `json:"range"`
		Placeholder string   `json:"placeholder"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("prepareRename result %s: %v", m.Result, err)
	}
	if res.Placeholder != placeholder {
		t.Errorf("placeholder %q, want %q", res.Placeholder, placeholder)
	}
	text := s.text(t, p.rel)
	if got := text[lspOffset(text, res.Range.Start):lspOffset(text, res.Range.End)]; got != covers {
		t.Errorf("range covers %q, want %q", got, covers)
	}
}

// checkRenameRefused fails unless a prepareRename answer is null or an error
// saying what can be renamed.
func checkRenameRefused(t *testing.T, m message) {
	t.Helper()
	if m.Error == nil && string(m.Result) != "null" {
		t.Fatalf("prepareRename = %s, want an error or null", m.Result)
	}
	if m.Error != nil && !strings.Contains(m.Error.Message, "rename") {
		t.Errorf("error message %q does not say what can be renamed", m.Error.Message)
	}
}

func (s *archiveSession) rename(t *testing.T, l *wantLine) {
	p := l.place()
	newName := l.literal("a new name")
	l.arrow()
	var wantErr string
	failing := !l.maybe("{}")
	if failing {
		l.keyword("error") // or {}
		l.keyword("~")
		wantErr = l.literal("a text of the error")
	}
	l.end()
	m := s.c.call("textDocument/rename", renameParams(s.c, p.rel, s.position(t, p), newName))
	if failing {
		if m.Error == nil {
			t.Fatalf("rename to %q = %s, want an error", newName, m.Result)
		}
		if !strings.Contains(m.Error.Message, wantErr) {
			t.Errorf("error %q, want it to contain %q", m.Error.Message, wantErr)
		}
		return
	}
	if m.Error != nil {
		t.Fatalf("rename: error %d %s", m.Error.Code, m.Error.Message)
	}
	var we wsEditJSON
	if err := json.Unmarshal(m.Result, &we); err != nil || len(we.Changes)+len(we.DocumentChanges) != 0 {
		t.Errorf("rename to %q = %s, want an edit changing nothing", newName, m.Result)
	}
}

func (s *archiveSession) diagnostics(t *testing.T, l *wantLine) {
	rel := l.word("a file")
	l.arrow()
	var want []string
	for more := true; more; more = l.maybe(",") {
		r := l.word("a range L:C-L:C")
		if !diagnosticRange.MatchString(r) {
			l.malformed("range %q is not L:C-L:C", r)
		}
		want = append(want, r+" "+l.word("a code"))
	}
	l.end()
	if _, ok := s.clients["default"].opened[rel]; ok {
		t.Fatalf("%s is open: ask for its diagnostics before a request in it", rel)
	}
	pd, _ := s.c.diagnostics(0, rel, nil)
	var got []string
	for _, d := range pd.Diagnostics {
		got = append(got, fmt.Sprintf("%d:%d-%d:%d %s", d.Range.Start.Line+1, d.Range.Start.Character+1,
			d.Range.End.Line+1, d.Range.End.Character+1, d.Code))
		if d.Source != "saga" || d.Message == "" || d.Severity < 1 || d.Severity > 4 {
			t.Errorf("incomplete diagnostic %+v", d)
		}
	}
	if pd.Version != nil {
		t.Errorf("a file that is not open has no version, got %d", *pd.Version)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics\n got %s\nwant %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

var diagnosticRange = regexp.MustCompile(`^\d+:\d+-\d+:\d+$`)

// location is where a span is, in its file as on disk.
func (s *archiveSession) location(t *testing.T, p place) navLocation {
	t.Helper()
	return navLocation{URI: s.c.uri(p.rel), Range: spanOf(t, navDisk(t, s.c, p.rel), p.needle, p.n)}
}

func ptr[T any](v T) *T { return &v }
