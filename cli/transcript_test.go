package cli_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestTranscripts runs every testdata/transcripts/<example>.txt against a
// copy of examples/<example>. A transcript is a list of cases:
//
//	# a comment
//	$ plan --max-parallel 0 x      the arguments (split on spaces)
//	in .saga/stories               optional: the working directory, in the copy
//	exit 2                         the exit code
//	stderr: <line>                 the next line of stderr, exactly
//	stdout: <line>                 the next line of stdout, exactly
//	stdout has: <line>             some line of stdout, exactly
//
// The stderr:/stdout: lines of a case are the first lines of that stream,
// in order; a stream a case says nothing about must be empty.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		example := strings.TrimSuffix(filepath.Base(file), ".txt")
		root := testkit.CopyExample(t, example)
		for _, c := range readTranscript(t, file) {
			t.Run(example+"/"+strings.Join(c.args, "_"), func(t *testing.T) {
				dir := filepath.Join(root, c.in)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				r := run(t, dir, c.args...)
				if r.Code != c.exit {
					t.Errorf("%s:%d: exit %d, want %d", file, c.line, r.Code, c.exit)
				}
				c.stdout.check(t, file, c.line, "stdout", r.Stdout)
				c.stderr.check(t, file, c.line, "stderr", r.Stderr)
			})
		}
	}
}

type transcriptCase struct {
	line           int
	args           []string
	in             string
	exit           int
	stdout, stderr streamWant
}

type streamWant struct {
	first []string // the stream starts with these lines
	has   []string // and contains these lines somewhere
}

func (w streamWant) check(t *testing.T, file string, line int, name, got string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(w.first) == 0 && len(w.has) == 0 {
		if got != "" {
			t.Errorf("%s:%d: %s should be empty:\n%s", file, line, name, got)
		}
		return
	}
	for i, want := range w.first {
		if i >= len(lines) || lines[i] != want {
			t.Errorf("%s:%d: %s line %d:\n got: %q\nwant: %q\nall of %s:\n%s", file, line, name, i+1, at(lines, i), want, name, got)
			return
		}
	}
	for _, want := range w.has {
		if !slices.Contains(lines, want) {
			t.Errorf("%s:%d: %s lacks the line %q:\n%s", file, line, name, want, got)
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(no such line)"
}

func readTranscript(t *testing.T, file string) []*transcriptCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []*transcriptCase
	var c *transcriptCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if args, ok := strings.CutPrefix(line, "$ "); ok {
			c = &transcriptCase{line: n, args: strings.Fields(args), exit: -1}
			cases = append(cases, c)
			continue
		}
		if c == nil {
			t.Fatalf("%s:%d: %q before the first $ line", file, n, line)
		}
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "in":
			c.in = value
		case "exit":
			if c.exit, err = strconv.Atoi(value); err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
		case "stdout:":
			c.stdout.first = append(c.stdout.first, value)
		case "stderr:":
			c.stderr.first = append(c.stderr.first, value)
		case "stdout", "stderr":
			want, ok := strings.CutPrefix(value, "has: ")
			if !ok {
				t.Fatalf("%s:%d: want %q or %q", file, n, key+": <line>", key+" has: <line>")
			}
			if key == "stdout" {
				c.stdout.has = append(c.stdout.has, want)
			} else {
				c.stderr.has = append(c.stderr.has, want)
			}
		default:
			t.Fatalf("%s:%d: unknown line %q", file, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.exit < 0 {
			t.Fatalf("%s:%d: no exit line", file, c.line)
		}
	}
	return cases
}
