package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store/glob"
)

// Protected files (docs/worker.md#protected-files): the tests that count
// are the reference commit's. A check passes only when it passes on the
// story's tree with its protected files as they are at R — those the
// story modified or deleted put back, test files it added left out — and
// on the full tree. Which files are protected is decided here, from paths
// and R's tree: the default set per ecosystem, what the tests lean on
// besides test files (support.go), the tasks' "protect" globs and the
// files a check command names; "mayChangeTests" lets the story change
// them. A story that modified or deleted a protected file (not allowed)
// keeps its PR a draft.

// Changes of a file, against R.
const (
	Modified = "modified"
	Deleted  = "deleted"
	Added    = "added"
)

// Rules: what becomes of a changed file.
const (
	// RuleProtected: a protected file modified or deleted — R's version in
	// the protected run, and the PR stays a draft.
	RuleProtected = "protected"
	// RuleAllowed: a protected file the tasks' mayChangeTests lets the
	// story change — the story's version in both runs.
	RuleAllowed = "allowed"
	// RuleAddedTest: a test file the story added — left out of the
	// protected run; never stops the PR.
	RuleAddedTest = "added test"
	// RuleSection: a manifest whose test-runner section changed
	// (package.json's test scripts and runner configs, pyproject.toml's
	// [tool.pytest…], go.mod's replace and toolchain lines) — compared,
	// never restored; the PR stays a draft.
	RuleSection = "test-runner section"
	// RuleListed: go.mod (but for its replace and toolchain lines) and
	// go.sum — listed, not protected.
	RuleListed = "listed"
)

// FileChange is a file the story changed that the rule looks at.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // Modified, Deleted or Added
	Rule   string `json:"rule"`
}

// Blocks tells whether the change keeps the story's PR a draft.
func (c FileChange) Blocks() bool { return c.Rule == RuleProtected || c.Rule == RuleSection }

func (c FileChange) String() string {
	s := c.Path + " (" + c.Change
	switch c.Rule {
	case RuleAllowed:
		s += ", allowed by mayChangeTests"
	case RuleSection:
		if path.Base(c.Path) == "go.mod" {
			s += ": its replace or toolchain lines"
		} else {
			s += ": its test-runner section"
		}
	case RuleListed:
		s += ", listed, not protected"
	}
	return s + ")"
}

// ProtectedEvent reports changes in the run protocol (runs.KindProtected).
func ProtectedEvent(changes []FileChange) runs.Event {
	e := runs.Event{Event: runs.KindProtected, Protected: []runs.ProtectedFile{}}
	for _, c := range changes {
		e.Protected = append(e.Protected, runs.ProtectedFile{Path: c.Path, Change: c.Change, Rule: c.Rule, Blocks: c.Blocks()})
	}
	if b := Blocking(changes); len(b) > 0 {
		e.Message = "protected files changed: " + Paths(b)
	}
	return e
}

// Blocking are the changes that keep the PR a draft.
func Blocking(changes []FileChange) []FileChange {
	var out []FileChange
	for _, c := range changes {
		if c.Blocks() {
			out = append(out, c)
		}
	}
	return out
}

// Paths lists the changes' paths, each with its change.
func Paths(changes []FileChange) string {
	s := make([]string, len(changes))
	for i, c := range changes {
		s[i] = c.Path + " (" + c.Change + ")"
	}
	return strings.Join(s, ", ")
}

// Rules are a story's protection: the union of its tasks' (as they count,
// at R), with the files its checks name.
type Rules struct {
	protect, mayChange []string
	mayChangeAll       bool
	words              map[string]bool
}

// RulesOf gathers the protection of the manifest's tasks.
func RulesOf(m *Manifest) Rules {
	r := Rules{words: map[string]bool{}}
	if m == nil {
		return r
	}
	for _, tc := range m.Tasks {
		r.protect = append(r.protect, tc.Protection.Protect...)
		r.mayChange = append(r.mayChange, tc.Protection.MayChangeGlobs...)
		r.mayChangeAll = r.mayChangeAll || tc.Protection.MayChangeAll
		for _, c := range tc.Commands {
			for _, w := range commandPaths(c) {
				r.words[w] = true
			}
		}
	}
	return r
}

// commandPaths are the words of a command that could name a file of the
// repository: relative paths, cleaned ("./run-tests.sh" → "run-tests.sh").
// Only those that are files at R count (the caller only asks about files
// R has).
func commandPaths(command string) []string {
	fields := strings.FieldsFunc(command, func(c rune) bool {
		return strings.ContainsRune(" \t\n;|&<>()`'\"=", c)
	})
	var out []string
	for _, f := range fields {
		if f == "" || f[0] == '-' || f[0] == '/' || f[0] == '$' || f[0] == '~' {
			continue
		}
		if p := path.Clean(f); p != "." && !strings.HasPrefix(p, "../") && p != ".." {
			out = append(out, p)
		}
	}
	return out
}

// testDirs are folders everything in is a test file.
var testDirs = []string{"testdata", "tests", "__tests__"}

// TestFile tells whether rel (a slash path from the repository's top) is a
// test file by the defaults: Go's *_test.go and testdata/, Python's
// test_*.py, *_test.py, conftest.py and tests/, JS/TS *.test.*, *.spec.*
// and __tests__/, Rust's tests/.
func TestFile(rel string) bool {
	dir, base := path.Split(rel)
	for _, d := range strings.Split(strings.Trim(dir, "/"), "/") {
		if slices.Contains(testDirs, d) {
			return true
		}
	}
	switch {
	case strings.HasSuffix(base, "_test.go"), base == "conftest.py":
		return true
	case strings.HasSuffix(base, ".py"):
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")
	}
	for _, mid := range []string{".test.", ".spec."} {
		if i := strings.Index(base, mid); i > 0 && i+len(mid) < len(base) {
			return true
		}
	}
	return false
}

// buildFiles are the build and test-runner files protected whole, by
// name; buildPrefixes by the start of their name (jest.config.js, …).
var (
	buildFiles    = []string{"Makefile", "GNUmakefile", "makefile", "justfile", "Justfile", ".justfile", "pytest.ini", "tox.ini", "setup.cfg"}
	buildPrefixes = []string{"jest.config.", "vitest.config.", ".mocharc.", "karma.conf."}
)

// BuildFile tells whether rel is a build or test-runner file protected
// whole.
func BuildFile(rel string) bool {
	base := path.Base(rel)
	if slices.Contains(buildFiles, base) {
		return true
	}
	for _, p := range buildPrefixes {
		if strings.HasPrefix(base, p) && len(base) > len(p) {
			return true
		}
	}
	return false
}

// manifests are the files only whose test-runner sections are compared.
var manifests = []string{"package.json", "pyproject.toml"}

// listedFiles are changed files the digest lists without protecting them.
var listedFiles = []string{"go.mod", "go.sum"}

// protected tells whether a file R has is protected by the rules.
func (r Rules) protected(rel string) bool {
	return TestFile(rel) || BuildFile(rel) || r.words[rel] || glob.Match(r.protect, rel)
}

// mayChangeFile tells whether the story may change a protected file.
func (r Rules) mayChangeFile(rel string) bool {
	return r.mayChangeAll || glob.Match(r.mayChange, rel)
}

// Protected is what the protection rule makes of a story's tree: the
// changes it looks at, and the view the protected run sees.
type Protected struct {
	Fork    string // R
	Changes []FileChange
	View    View
}

// Protect compares the tree in dir (a worktree: its working files, not
// only what is committed) with R (fork, a full hash) and applies the
// rules. R's versions of the files the protected run restores are read
// with every object checked against R's hash.
func protect(ctx context.Context, g git.Repo, dir, fork string, rules Rules) (*Protected, error) {
	// Both at once: the gate's budget counts every millisecond. The
	// comparison is one walk of the worktree (git.Repo.ChangesFrom);
	// ignored files count too (a folder wholly ignored as one entry):
	// Python imports an ignored unittest.pyc, the go command builds an
	// ignored .go file or vendor/.
	var listing string
	listed := make(chan error, 1)
	go func() {
		var err error
		listing, err = g.Raw(ctx, "ls-tree", "-r", "-z", "--name-only", fork)
		listed <- err
	}()
	ch, err := g.ChangesFrom(ctx, fork, ".", ":(exclude).saga")
	if lerr := <-listed; err == nil && lerr != nil {
		return nil, fmt.Errorf("list the files of %s: %w", Short(fork), lerr)
	}
	if err != nil {
		return nil, fmt.Errorf("compare the worktree with %s: %w", Short(fork), err)
	}
	type entry struct{ status, path string }
	var entries []entry
	var changed []string
	atFork := map[string]bool{} // changed files R has
	for _, p := range ch.TrackedPaths() {
		entries = append(entries, entry{ch.Tracked[p], p})
		changed = append(changed, p)
		if ch.Tracked[p] != "A" {
			atFork[p] = true
		}
	}
	for _, p := range ch.Untracked {
		entries = append(entries, entry{"A", p})
		changed = append(changed, p)
	}
	ign := ch.Ignored
	for _, p := range ign {
		changed = append(changed, strings.TrimSuffix(p, "/"))
	}
	sup, err := newSupport(ctx, g, dir, fork, listing, changed, atFork)
	if err != nil {
		return nil, err
	}
	for _, p := range ign {
		// Only what the tests lean on counts of what git ignores; a
		// folder as a whole when it is vendor/ or a Python package.
		if d, isDir := strings.CutSuffix(p, "/"); isDir {
			if sup.vendored(d) || sup.pyShadow(d+"/__init__.py") {
				entries = append(entries, entry{"A", d})
			}
		} else if leaned, _ := sup.leanedOn(p); leaned {
			entries = append(entries, entry{"A", p})
		}
	}
	out := &Protected{Fork: fork, View: View{Dir: dir}}
	var atR []string // files whose version at R is needed
	for _, e := range entries {
		change := Modified
		switch e.status {
		case "A":
			change = Added
		case "D":
			change = Deleted
		}
		base := path.Base(e.path)
		leaned, blocksAdded := sup.leanedOn(e.path)
		switch {
		case change == Added:
			switch {
			case TestFile(e.path) || glob.Match(rules.protect, e.path) || leaned && !blocksAdded:
				out.Changes = append(out.Changes, FileChange{e.path, change, RuleAddedTest})
				out.View.Hide = append(out.View.Hide, e.path)
			case !leaned && !BuildFile(e.path):
			case rules.mayChangeFile(e.path):
				out.Changes = append(out.Changes, FileChange{e.path, change, RuleAllowed})
			default:
				// What the tests lean on, added: left out of the protected
				// run, and the PR stays a draft.
				out.Changes = append(out.Changes, FileChange{e.path, change, RuleProtected})
				out.View.Hide = append(out.View.Hide, e.path)
			}
		case base == "go.mod" && !leaned:
			atR = append(atR, e.path)
			out.Changes = append(out.Changes, FileChange{e.path, change, RuleSection})
		case slices.Contains(listedFiles, base) && !leaned:
			out.Changes = append(out.Changes, FileChange{e.path, change, RuleListed})
		case slices.Contains(manifests, base) && !rules.words[e.path] && !glob.Match(rules.protect, e.path):
			atR = append(atR, e.path)
			out.Changes = append(out.Changes, FileChange{e.path, change, RuleSection})
		case !rules.protected(e.path) && !leaned:
		case rules.mayChangeFile(e.path):
			out.Changes = append(out.Changes, FileChange{e.path, change, RuleAllowed})
		default:
			atR = append(atR, e.path)
			out.Changes = append(out.Changes, FileChange{e.path, change, RuleProtected})
		}
	}
	// node_modules/.bin is ignored: its shims are judged as they are.
	for _, b := range sup.binShims(dir) {
		if rules.mayChangeFile(b) {
			out.Changes = append(out.Changes, FileChange{b, Modified, RuleAllowed})
			continue
		}
		out.Changes = append(out.Changes, FileChange{b, Modified, RuleProtected})
		out.View.Hide = append(out.View.Hide, b)
	}
	if len(atR) == 0 {
		return out, nil
	}
	blobs, err := g.BlobsAt(ctx, fork, atR)
	if err != nil {
		return nil, fmt.Errorf("read the protected files at %s: %w", Short(fork), err)
	}
	out.View.Restore = map[string]git.Blob{}
	kept := out.Changes[:0]
	for _, c := range out.Changes {
		switch {
		case c.Rule == RuleSection:
			var now []byte
			if c.Change != Deleted {
				now, _ = filesafe.ReadInside(dir, c.Path)
			}
			if sameSections(path.Base(c.Path), blobs[c.Path].Data, now) {
				if path.Base(c.Path) == "go.mod" {
					c.Rule = RuleListed // a new requirement: listed, as before
					kept = append(kept, c)
				}
				continue // only what is not the test runner's changed
			}
		case c.Rule == RuleProtected && c.Change != Added && !slices.Contains(out.View.Hide, c.Path):
			b, ok := blobs[c.Path]
			if !ok {
				continue // not a regular file at R (a link): nothing to restore
			}
			out.View.Restore[c.Path] = b
		}
		kept = append(kept, c)
	}
	out.Changes = kept
	return out, nil
}

// sameSections tells whether two versions of a manifest have the same
// test-runner sections.
func sameSections(name string, a, b []byte) bool {
	switch name {
	case "package.json":
		return reflect.DeepEqual(jsonSections(a), jsonSections(b))
	case "go.mod":
		return slices.Equal(goModSections(a), goModSections(b))
	}
	return slices.Equal(tomlSections(a), tomlSections(b))
}

// jsonSections are package.json's test-runner members: its test scripts
// (test, test:*, pretest, posttest) and the runners' configurations.
func jsonSections(src []byte) map[string]any {
	var v map[string]any
	if json.Unmarshal(src, &v) != nil {
		return map[string]any{"unreadable": string(src)}
	}
	out := map[string]any{}
	if scripts, ok := v["scripts"].(map[string]any); ok {
		for k, s := range scripts {
			if k == "test" || k == "pretest" || k == "posttest" || strings.HasPrefix(k, "test:") {
				out["scripts."+k] = s
			}
		}
	}
	for _, k := range []string{"jest", "mocha", "ava", "vitest", "tap", "c8", "nyc"} {
		if s, ok := v[k]; ok {
			out[k] = s
		}
	}
	return out
}

// tomlSections are pyproject.toml's test-runner tables ([tool.pytest…],
// [tool.tox…], [tool.coverage…]), their lines trimmed, blank ones
// dropped.
func tomlSections(src []byte) []string {
	var out []string
	in := false
	for _, line := range bytes.Split(src, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "[") {
			name := strings.Trim(l, "[] ")
			in = false
			for _, p := range []string{"tool.pytest", "tool.tox", "tool.coverage"} {
				if name == p || strings.HasPrefix(name, p+".") {
					in = true
				}
			}
		}
		if in && l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
