package verify

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
)

// What the protected tests lean on besides the test files
// (docs/worker.md#what-the-tests-lean-on), decided from R's tree so that
// nothing the story changed can take a file out of it:
//
//   - Go: the packages of the repository only test files import (directly
//     or through other such packages) — test helpers; vendor/ beside a
//     go.mod or go.work; go.work and go.work.sum; go.mod's replace and
//     toolchain lines (goModSections).
//   - Python: a module or package on the import path named like the
//     standard library or the test runner (unittest.py, pytest/…,
//     sitecustomize.py), and any *.pth file.
//   - Node: the runners' config files (BuildFile) and node_modules/.bin
//     shims that are not npm's links into node_modules (binShims).
//
// A modified or deleted such file is protected (R's version in the
// protected run); an added one is left out of the protected run and, but
// for a file added to a test helper (like an added test), blocks.

// support is what the rules know of R's tree.
type support struct {
	files   map[string]bool // R's files
	helpers map[string]bool // folders of Go test-helper packages
	goRoots []string        // folders with a go.mod or go.work at R
}

// leanedOn tells whether rel (a file R has, or a file the story added) is
// one the protected tests lean on, and whether an added one blocks.
func (s *support) leanedOn(rel string) (leaned, blocksAdded bool) {
	base := path.Base(rel)
	switch {
	case s.helpers[path.Dir(rel)]:
		return true, false
	case base == "go.work" || base == "go.work.sum":
		return true, true
	case s.vendored(rel):
		return true, true
	case s.pyShadow(rel):
		return true, true
	}
	return false, false
}

// vendored tells whether rel lies in a vendor/ folder beside a go.mod or
// go.work of R: the go command builds from it instead of the module cache.
func (s *support) vendored(rel string) bool {
	for _, r := range s.goRoots {
		v := "vendor"
		if r != "." {
			v = r + "/vendor"
		}
		if rel == v || strings.HasPrefix(rel, v+"/") {
			return true
		}
	}
	return false
}

// pyRunner are the modules a test run imports before any test: the
// runners' and the interpreter's start-up hooks.
var pyRunner = []string{"unittest", "doctest", "pytest", "_pytest", "pluggy", "sitecustomize", "usercustomize", "site"}

// pyStdlib are the standard library's top-level modules (Python 3.11's
// sys.stdlib_module_names, without the private ones).
var pyStdlib = strings.Fields(`abc aifc argparse array ast asynchat asyncio asyncore atexit audioop
base64 bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs
codeop collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg
crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email
encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale
logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib multiprocessing netrc
nis nntplib ntpath numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools
pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile
pyclbr pydoc pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched
secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver
spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct
subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap
threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty types typing
unicodedata unittest urllib uu uuid venv warnings wave weakref wsgiref xdrlib xml xmlrpc zipapp
zipfile zipimport zlib zoneinfo`)

// pyShadow tells whether rel is a Python module or package that shadows
// the test runner (anywhere) or the standard library where it lies: named
// like one of its modules, in a folder that is not a package at R (a
// folder on the import path: the working directory, a script's folder, a
// folder pytest or unittest's discovery inserts; a package's types.py is
// its own); or a *.pth file anywhere.
func (s *support) pyShadow(rel string) bool {
	dir, base := path.Dir(rel), path.Base(rel)
	if strings.HasSuffix(base, ".pth") {
		return true
	}
	name, ok := pyModule(base)
	if !ok {
		return false
	}
	if name == "__init__" {
		if dir == "." {
			return false
		}
		dir, name = path.Dir(dir), path.Base(dir)
	}
	if slices.Contains(pyRunner, name) {
		// Anywhere: a package folder is on the path too when a check runs
		// in it (cd pkg && python3 -m unittest).
		return true
	}
	if !slices.Contains(pyStdlib, name) {
		return false
	}
	init := "__init__.py"
	if dir != "." {
		init = dir + "/" + init
	}
	return !s.files[init]
}

// pyModule is the module a file named base is, when it is one: a source,
// a compiled file Python imports without its source, an extension.
func pyModule(base string) (string, bool) {
	for _, ext := range []string{".py", ".pyc", ".pyw"} {
		if n, ok := strings.CutSuffix(base, ext); ok {
			return n, true
		}
	}
	if strings.HasSuffix(base, ".so") || strings.HasSuffix(base, ".pyd") {
		n, _, _ := strings.Cut(base, ".")
		return n, true
	}
	return "", false
}

// newSupport lists R's files and, when the story changed a file in a
// folder of Go code (changed: the entries' paths), finds the test
// helpers. changedAtR are the entries R has (modified or deleted): their
// R versions are read from git, every other file of R from the worktree,
// where it is R's.
func newSupport(ctx context.Context, g git.Repo, dir, fork string, listing string, changed []string, changedAtR map[string]bool) (*support, error) {
	s := &support{files: map[string]bool{}}
	for _, f := range strings.Split(strings.TrimRight(listing, "\x00"), "\x00") {
		if f == "" {
			continue
		}
		s.files[f] = true
		if b := path.Base(f); b == "go.mod" || b == "go.work" {
			s.goRoots = append(s.goRoots, path.Dir(f))
		}
	}
	if len(s.goRoots) == 0 {
		return s, nil
	}
	goDirs := map[string]bool{}
	for f := range s.files {
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
			goDirs[path.Dir(f)] = true
		}
	}
	need := false
	for _, c := range changed {
		if goDirs[path.Dir(c)] && !TestFile(c) {
			need = true
			break
		}
	}
	if !need {
		return s, nil
	}
	// The helpers depend on R alone: found once per reference commit and
	// kept in saga-lsp's folder of the git dir, which no sandbox writes
	// (the gate runs at every completion; parsing every Go file's imports
	// takes tens of milliseconds in a repository of 500).
	cache := ""
	if views, err := viewsDir(dir); err == nil {
		cache = filepath.Join(filepath.Dir(views), "helpers", fork)
		if data, err := os.ReadFile(cache); err == nil {
			s.helpers = map[string]bool{}
			for _, d := range strings.Split(string(data), "\n") {
				if d != "" {
					s.helpers[d] = true
				}
			}
			return s, nil
		}
	}
	read, done, err := readerAt(ctx, g, dir, fork, changedAtR)
	if err != nil {
		return nil, err
	}
	defer done()
	s.helpers = goHelpers(s.files, read)
	if cache != "" && os.MkdirAll(filepath.Dir(cache), 0o700) == nil {
		list := slices.Sorted(maps.Keys(s.helpers))
		if err := filesafe.WriteFileAtomic(cache, []byte(strings.Join(list, "\n")+"\n"), 0o600); err != nil {
			slog.Debug("keep the test helpers found", "err", err)
		}
	}
	return s, nil
}

// readerAt reads R's version of a Go file, its start at least (the
// imports): from git for those the story changed, from the worktree (where
// it is R's) for the others, through one os.Root.
func readerAt(ctx context.Context, g git.Repo, dir, fork string, changedAtR map[string]bool) (read func(string, bool) []byte, done func(), err error) {
	var fromGit []string
	for f := range changedAtR {
		if b := path.Base(f); strings.HasSuffix(b, ".go") || b == "go.mod" {
			fromGit = append(fromGit, f)
		}
	}
	blobs := map[string]git.Blob{}
	if len(fromGit) > 0 {
		if blobs, err = g.BlobsAt(ctx, fork, fromGit); err != nil {
			return nil, nil, fmt.Errorf("read the changed Go files at %s: %w", Short(fork), err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read the worktree's Go files: %w", err)
	}
	buf := make([]byte, headSize)
	return func(rel string, whole bool) []byte {
		if changedAtR[rel] {
			return blobs[rel].Data
		}
		f, err := root.Open(rel)
		if err != nil {
			return nil
		}
		defer f.Close()
		if whole {
			data, _ := io.ReadAll(io.LimitReader(f, filesafe.MaxFileSize))
			return data
		}
		n, _ := io.ReadFull(f, buf)
		return buf[:n]
	}, func() { root.Close() }, nil
}

// headSize is how much of a Go file is read first for its imports: the
// whole file is read only when they go on past it.
const headSize = 16 << 10

// goHelpers are the folders of the Go packages of R that only test files
// import, directly or through other such packages — not their own test
// files, and not counting a package with tests of its own unless its path
// says test (testutil, testkit): a library package another package's tests
// use is code under test. Build constraints are not read: a file for
// another platform counts as an importer, so a package is taken for a
// helper only when no non-test file anywhere imports it.
func goHelpers(files map[string]bool, read func(rel string, whole bool) []byte) map[string]bool {
	type module struct{ dir, path string }
	var mods []module
	for f := range files {
		if path.Base(f) == "go.mod" {
			if p := modulePath(read(f, true)); p != "" {
				mods = append(mods, module{path.Dir(f), p})
			}
		}
	}
	// The longest module path first: a nested module owns its folders.
	slices.SortFunc(mods, func(a, b module) int { return len(b.path) - len(a.path) })
	resolve := func(imp string) (string, bool) {
		for _, m := range mods {
			if rest, ok := strings.CutPrefix(imp, m.path); ok && (rest == "" || rest[0] == '/') {
				return path.Clean(path.Join(m.dir, strings.TrimPrefix(rest, "/"))), true
			}
		}
		return "", false
	}
	prodEdges := map[string][]string{} // folder → folders its non-test files import
	fromTests := map[string]bool{}     // folders another folder's test files import
	hasTests := map[string]bool{}
	pkgs := map[string]bool{}
	fset := token.NewFileSet()
	for f := range files {
		if !strings.HasSuffix(f, ".go") || goIgnored(f) {
			continue
		}
		d := path.Dir(f)
		test := strings.HasSuffix(f, "_test.go")
		if test {
			hasTests[d] = true
		} else {
			pkgs[d] = true
		}
		src := read(f, false)
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil && len(src) == headSize {
			af, _ = parser.ParseFile(fset, f, read(f, true), parser.ImportsOnly)
		}
		if af == nil {
			continue // unreadable: imports nothing we can tell
		}
		for _, is := range af.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				continue
			}
			to, ok := resolve(imp)
			if !ok || to == d {
				continue
			}
			if test {
				fromTests[to] = true
			} else {
				prodEdges[d] = append(prodEdges[d], to)
			}
		}
	}
	reach := func(seeds []string) map[string]bool {
		seen := map[string]bool{}
		for len(seeds) > 0 {
			d := seeds[len(seeds)-1]
			seeds = seeds[:len(seeds)-1]
			if seen[d] {
				continue
			}
			seen[d] = true
			seeds = append(seeds, prodEdges[d]...)
		}
		return seen
	}
	var testSeeds, prodSeeds []string
	for d := range fromTests {
		testSeeds = append(testSeeds, d)
	}
	test := reach(testSeeds)
	for d := range pkgs {
		if !test[d] {
			prodSeeds = append(prodSeeds, d)
		}
	}
	prod := reach(prodSeeds)
	out := map[string]bool{}
	for d := range test {
		if pkgs[d] && !prod[d] && (!hasTests[d] || saysTest(d)) {
			out[d] = true
		}
	}
	return out
}

// goIgnored tells whether the go command leaves f out of every package:
// below testdata/ or a folder named with a leading _ or .
func goIgnored(f string) bool {
	for _, p := range strings.Split(path.Dir(f), "/") {
		if p == "testdata" || strings.HasPrefix(p, "_") || (strings.HasPrefix(p, ".") && p != ".") {
			return true
		}
	}
	return false
}

// saysTest tells whether a folder's path names it a test package.
func saysTest(d string) bool {
	for _, p := range strings.Split(d, "/") {
		if strings.Contains(strings.ToLower(p), "test") {
			return true
		}
	}
	return false
}

// modulePath is a go.mod's module path.
func modulePath(src []byte) string {
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(rest, "//")
			p := strings.TrimSpace(rest)
			if u, err := strconv.Unquote(p); err == nil {
				p = u
			}
			return p
		}
	}
	return ""
}

// goModSections are go.mod's lines that change what the tests build
// against without a new requirement: replace directives and the
// toolchain line, trimmed, comments and blank lines dropped. Lines, not a
// parse (golang.org/x/mod would be a dependency of the hook for this): a
// reformatting of them counts as a change, which errs on the safe side.
func goModSections(src []byte) []string {
	var out []string
	block := ""
	for _, line := range strings.Split(string(src), "\n") {
		l, _, _ := strings.Cut(line, "//")
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if block != "" {
			if l == ")" {
				block = ""
				continue
			}
			if block == "replace" {
				out = append(out, "replace "+l)
			}
			continue
		}
		verb, rest, _ := strings.Cut(l, " ")
		if strings.HasSuffix(verb, "(") || rest == "(" {
			block = strings.TrimSuffix(verb, "(")
			continue
		}
		if verb == "replace" || verb == "toolchain" {
			out = append(out, l)
		}
	}
	return out
}

// binShims are the node_modules/.bin entries beside a package.json of R
// whose folder an npm or Yarn lockfile at R goes with, that are not what
// those tools make there: a link to a file of that node_modules outside
// .bin. (pnpm writes scripts there instead, which are not checked.) They
// are ignored by git, so only the folder on disk tells; it is read through
// os.Root, so no link leads the reading out of the worktree.
func (s *support) binShims(dir string) []string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []string
	for f := range s.files {
		if b := path.Base(f); b != "package-lock.json" && b != "yarn.lock" && b != "npm-shrinkwrap.json" {
			continue
		}
		mods := "node_modules"
		if d := path.Dir(f); d != "." {
			mods = d + "/node_modules"
		}
		bin := mods + "/.bin"
		d, err := root.Open(bin)
		if err != nil {
			continue
		}
		des, _ := d.ReadDir(-1)
		d.Close()
		for _, de := range des {
			rel := bin + "/" + de.Name()
			if !slices.Contains(out, rel) && !npmShim(root, mods, rel, de) {
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	return out
}

// npmShim tells whether rel is a link, relative, to a regular file of the
// node_modules folder mods outside its .bin.
func npmShim(root *os.Root, mods, rel string, de os.DirEntry) bool {
	if de.Type()&os.ModeSymlink == 0 {
		return false
	}
	target, err := root.Readlink(rel)
	if err != nil || path.IsAbs(target) {
		return false
	}
	to := path.Join(path.Dir(rel), target)
	if !strings.HasPrefix(to, mods+"/") || strings.HasPrefix(to, mods+"/.bin/") {
		return false
	}
	fi, err := root.Stat(to)
	return err == nil && fi.Mode().IsRegular()
}
