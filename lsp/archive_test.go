package lsp

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestArchives runs the LSP feature cases written as data,
// testdata/<feature>/*.txtar. An archive's leading comment says what it pins;
// its files but "want" are a workspace, written into a temp dir, and a server
// is started on it over pipes and initialized with capsFull. Every line of
// "want" is then one request and its expected answer, run in order on that
// server as a subtest named after its line number. A file a request is made in is
// opened (didOpen with its text on disk) the first time; expected locations
// are read from disk without opening their files. At the end the workspace on
// disk must still be the archive's: requests never write.
//
// A line is `<request> => <expected>`; blank lines and # comments are left
// out. Texts, needles and names are Go string literals: "Status: `done`",
// or between backquotes when they hold double quotes: `"add-item"`.
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

// archiveSession is a server on a workspace; files are opened (didOpen with
// their disk text) the first time a request is made in them.
type archiveSession struct {
	c      *client
	opened map[string]string
}

func newArchiveSession(t *testing.T, root string) *archiveSession {
	t.Helper()
	return &archiveSession{c: startOn(t, root, capsFull), opened: map[string]string{}}
}

// startArchive is a session on the workspace of the archive at path.
func startArchive(t *testing.T, path string) *archiveSession {
	t.Helper()
	return newArchiveSession(t, archiveRoot(t, testkit.ReadArchive(t, path)))
}

// text opens rel (once) and returns its text; a missing file fails t.
func (s *archiveSession) text(t *testing.T, rel string) string {
	t.Helper()
	if text, ok := s.opened[rel]; ok {
		return text
	}
	text := navDisk(t, s.c, rel)
	s.c.openText(rel, text, 1)
	s.opened[rel] = text
	return text
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
	if _, ok := s.opened[rel]; ok {
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

// wantLine is the unread rest of a want line; what it cannot read fails the
// test as malformed.
type wantLine struct {
	t    *testing.T
	rest string
}

func (l *wantLine) malformed(format string, args ...any) {
	l.t.Helper()
	l.t.Fatalf("malformed want line: "+format, args...)
}

// word reads a bare word: up to a space or a comma (a comma alone is a word).
func (l *wantLine) word(what string) string {
	l.t.Helper()
	l.rest = strings.TrimLeft(l.rest, " ")
	n := strings.IndexAny(l.rest, " ,")
	switch {
	case n == 0 && l.rest[0] == ',':
		n = 1
	case n < 0:
		n = len(l.rest)
	}
	w := l.rest[:n]
	if w == "" || w[0] == '"' || w[0] == '`' {
		l.malformed("want %s at %q", what, l.rest)
	}
	l.rest = l.rest[n:]
	return w
}

// maybe reads the word w if it is next.
func (l *wantLine) maybe(w string) bool {
	rest := strings.TrimLeft(l.rest, " ")
	if after, ok := strings.CutPrefix(rest, w); ok && (after == "" || after[0] == ' ' || after[0] == ',' || w == ",") {
		l.rest = after
		return true
	}
	return false
}

// keyword reads the word w, which must be next.
func (l *wantLine) keyword(w string) {
	l.t.Helper()
	if !l.maybe(w) {
		l.malformed("want %s at %q", w, strings.TrimLeft(l.rest, " "))
	}
}

func (l *wantLine) arrow() {
	l.t.Helper()
	l.keyword("=>")
}

func (l *wantLine) end() {
	l.t.Helper()
	if rest := strings.TrimLeft(l.rest, " "); rest != "" {
		l.malformed("unexpected %q", rest)
	}
}

// literal reads a Go string literal and returns its value.
func (l *wantLine) literal(what string) string {
	l.t.Helper()
	l.rest = strings.TrimLeft(l.rest, " ")
	q, err := strconv.QuotedPrefix(l.rest)
	if err != nil || q[0] == '\'' {
		l.malformed("want %s (a Go string literal) at %q", what, l.rest)
	}
	l.rest = l.rest[len(q):]
	s, _ := strconv.Unquote(q)
	return s
}

// place reads `<file> <needle>[#n][+off]`.
func (l *wantLine) place() place {
	l.t.Helper()
	p := l.span()
	p.off = l.number("+")
	l.separated()
	return p
}

// span reads `<file> <needle>[#n]`.
func (l *wantLine) span() place {
	l.t.Helper()
	p := place{rel: l.word("a file"), needle: l.literal("a needle")}
	p.n = l.number("#")
	if !strings.HasPrefix(l.rest, "+") {
		l.separated()
	}
	return p
}

// number reads prefix and a number right after it, if prefix is next; 0 if
// it is not.
func (l *wantLine) number(prefix string) int {
	l.t.Helper()
	rest, ok := strings.CutPrefix(l.rest, prefix)
	if !ok {
		return 0
	}
	digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
	n, err := strconv.Atoi(digits)
	if err != nil {
		l.malformed("want a number after %s at %q", prefix, l.rest)
	}
	l.rest = rest[len(digits):]
	return n
}

// separated fails unless the next character ends a word.
func (l *wantLine) separated() {
	l.t.Helper()
	if l.rest != "" && l.rest[0] != ' ' && l.rest[0] != ',' {
		l.malformed("unexpected %q", l.rest)
	}
}
