package cli

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/store"
)

const checkSynopsis = "check [--root DIR] [--format text|json|github] [PATH…]"

func runCheck(env *Env, args []string) int {
	c := newCmdLine("check")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text, json or github (workflow annotations)")
	paths, err := c.parse(args)
	if err := cmp.Or(err, oneOf("format", *format, "text", "json", "github")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	scope, err := scopeOf(env, r, paths)
	if err != nil {
		return c.fail(env, err)
	}
	p, err := store.NewParser()
	if err != nil {
		return c.fail(env, err)
	}
	// check is a short batch run that keeps every file it parses until the
	// end: collecting while the heap only grows is wasted work (half the
	// parse time on 22,000 files). The limit still bounds a huge workspace.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	ws, err := p.Load(r)
	if err != nil {
		return c.fail(env, err)
	}
	var ds []store.Diagnostic
	for _, d := range ws.Diagnostics() {
		if scope.covers(d.File) {
			ds = append(ds, d)
		}
	}
	// Text and annotations show paths from where the user stands; JSON
	// keeps them root-relative, for tools.
	shown := func(rel string) string { return displayPath(env, r, rel) }
	switch *format {
	case "json":
		err = writeCheckJSON(env.Stdout, ds)
	case "github":
		err = writeGitHub(env.Stdout, ds, shown)
	default:
		err = writeText(env.Stdout, ds, shown, stylesFor(env, env.Stdout))
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	code := exitOK
	for _, d := range ds {
		if d.Code == store.CodeUnreadableFile {
			return exitUsage // an I/O problem: the check is incomplete
		}
		if d.Severity == store.SeverityError {
			code = exitFindings
		}
	}
	return code
}

// pathScope limits output to the given files and folders (relative to the
// root); empty means everything.
type pathScope []string

func (s pathScope) covers(rel string) bool {
	if len(s) == 0 {
		return true
	}
	for _, p := range s {
		if p == "." || rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

func scopeOf(env *Env, root string, paths []string) (pathScope, error) {
	var s pathScope
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(env.Dir, p)
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("%s: no such file or folder", p)
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s: outside the workspace %s", p, root)
		}
		s = append(s, filepath.ToSlash(rel))
	}
	return s, nil
}

type jsonDiagnostic struct {
	File     string      `json:"file"`
	Range    store.Range `json:"range"`
	Severity string      `json:"severity"`
	Code     store.Code  `json:"code"`
	Message  string      `json:"message"`
}

func writeCheckJSON(w io.Writer, ds []store.Diagnostic) error {
	out := struct {
		Diagnostics []jsonDiagnostic `json:"diagnostics"`
	}{Diagnostics: make([]jsonDiagnostic, 0, len(ds))}
	for _, d := range ds {
		out.Diagnostics = append(out.Diagnostics, jsonDiagnostic{d.File, d.Range, d.Severity.String(), d.Code, d.Message})
	}
	return printJSON(w, out)
}

// writeText prints `file:line:col: severity: message [code]`, 1-based for
// humans, and a summary line; the location is bold, errors red and
// warnings yellow when st is on. Paths and messages (which quote the
// files' text) are escaped for the terminal (termtext.Escape).
func writeText(w io.Writer, ds []store.Diagnostic, shown func(string) string, st styles) error {
	bw := bufio.NewWriter(w)
	counts := map[store.Severity]int{}
	files := map[string]bool{}
	for _, d := range ds {
		counts[d.Severity]++
		files[d.File] = true
		loc := fmt.Sprintf("%s:%d:%d:", termtext.Escape(shown(d.File)), d.Range.Start.Line+1, d.Range.Start.Character+1)
		fmt.Fprintf(bw, "%s %s: %s [%s]\n", st.fileName(loc), severityText(st, d.Severity), termtext.Escape(d.Message), d.Code)
	}
	if len(ds) == 0 {
		fmt.Fprintln(bw, "no problems found")
	} else {
		errs, warns := counts[store.SeverityError], counts[store.SeverityWarning]
		errText, warnText := fmt.Sprintf("%d error%s", errs, plural(errs)), fmt.Sprintf("%d warning%s", warns, plural(warns))
		if errs > 0 {
			errText = st.errorText(errText)
		}
		if warns > 0 {
			warnText = st.warningText(warnText)
		}
		fmt.Fprintf(bw, "%s, %s, %d info in %d file%s\n", errText, warnText,
			counts[store.SeverityInfo]+counts[store.SeverityHint], len(files), plural(len(files)))
	}
	return bw.Flush()
}

func severityText(st styles, s store.Severity) string {
	switch s {
	case store.SeverityError:
		return st.errorText(s.String())
	case store.SeverityWarning:
		return st.warningText(s.String())
	}
	return s.String()
}

// writeGitHub prints workflow commands that GitHub Actions turns into
// annotations on the changed files.
func writeGitHub(w io.Writer, ds []store.Diagnostic, shown func(string) string) error {
	bw := bufio.NewWriter(w)
	for _, d := range ds {
		level := "error"
		switch d.Severity {
		case store.SeverityWarning:
			level = "warning"
		case store.SeverityInfo, store.SeverityHint:
			level = "notice"
		}
		fmt.Fprintf(bw, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n", level,
			ghProperty(shown(d.File)), d.Range.Start.Line+1, d.Range.Start.Character+1, d.Range.End.Line+1, d.Range.End.Character+1,
			ghProperty("saga "+string(d.Code)), ghData(d.Message))
	}
	return bw.Flush()
}

// ghData and ghProperty escape as the Actions toolkit does, then what is
// left of control characters as on a terminal (the workflow log is one).
func ghData(s string) string {
	return termtext.Escape(strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s))
}

func ghProperty(s string) string {
	return termtext.Escape(strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
