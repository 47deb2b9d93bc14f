// Package testkit is what saga-lsp's tests share (and only tests import):
// the saga-lsp binary and other programs of the module built once per test
// process (linked once per run when make test shares them: BuildsVar), a
// copy of a folder tree, a Go build cache holding what go test reads
// (taken from the user's), files written from a map and read back, txtar
// cases run as subtests, git repositories made from a fixture, a
// clean environment, running a program to a Result, waiting for another
// process, helper processes re-executed from the test binary, how many
// goroutines hold a lock at once, a log read while it is written
// (LogBuffer), a private tmux server, headless
// Neovim running a script on the shared Lua harness, and the one rule for
// a test whose prerequisite is missing (Needs).
//
// A package whose tests build programs calls Main from its TestMain, so the
// builds are removed when its tests end. It imports nothing of saga-lsp, so
// the tests of every package (store's own included) can use it.
package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kit is the state of one test process: the module root, and where programs
// are built.
type kit struct {
	mu     sync.Mutex
	root   string
	dir    string
	built  map[string]string
	errors map[string]error
}

// The test process's kit. Tests of one package run in one process, so the
// binary is built once however many tests ask for it.
var shared = &kit{built: map[string]string{}, errors: map[string]error{}}

// Main runs the tests, then the cleanups, and removes what the tests built
// and the caches their runs made.
func Main(m *testing.M, cleanups ...func()) {
	caches := privateCaches()
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	shared.mu.Lock()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	shared.mu.Unlock()
	if caches != "" {
		removeAll(caches)
	}
	os.Exit(code)
}

// privateCaches points XDG_CACHE_HOME at a temp dir for the test process
// and the programs it starts, so that the story build caches saga-lsp
// keeps in the user's cache dir (buildcache.CacheRoot) do not pile up there; Go's
// own build cache is pinned where it was first, so builds stay warm.
func privateCaches() string {
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	d, err := os.MkdirTemp("", "saga-lsp-test-caches-")
	if err != nil {
		return ""
	}
	os.Setenv("XDG_CACHE_HOME", d)
	return d
}

// removeAll removes a tree, read-only folders (Go's module cache) too.
func removeAll(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// ModuleRoot is the folder holding the module's go.mod.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.moduleRoot(tb)
}

func (k *kit) moduleRoot(tb testing.TB) string {
	tb.Helper()
	if k.root == "" {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			tb.Fatalf("go env GOMOD: %v", err)
		}
		k.root = filepath.Dir(strings.TrimSpace(string(out)))
	}
	return k.root
}

// Build builds the module's package pkg (e.g. "./cmd/saga-lsp") once per
// test process and returns the executable's path.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	root := shared.moduleRoot(tb)
	if p, ok := shared.built[pkg]; ok {
		return p
	}
	if err, ok := shared.errors[pkg]; ok {
		tb.Fatal(err)
	}
	if shared.dir == "" {
		d, err := os.MkdirTemp("", "saga-lsp-testkit-")
		if err != nil {
			tb.Fatal(err)
		}
		shared.dir = d
	}
	// Named as go build would name it (the hook recognises saga-lsp by its
	// name), in a folder of its own.
	out := filepath.Join(shared.dir, strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(pkg, "./")), filepath.Base(pkg))
	if err := goBuild(root, pkg, out); err != nil {
		shared.errors[pkg] = err
		tb.Fatal(err)
	}
	shared.built[pkg] = out
	return out
}

// BuildsVar names a folder the test processes of one run share their
// built programs through (make test sets it to a new folder it removes
// after): each package's tests otherwise link saga-lsp and its helpers
// again, ≈ 4 s of CPU a package.
const BuildsVar = "SAGA_TEST_BUILDS"

// goBuild builds pkg into out: when BuildsVar is set, from the program a
// process of the same run published there if go build finds it up to
// date, publishing what it built otherwise.
func goBuild(root, pkg, out string) error {
	shared := sharedBuild(root, pkg, filepath.Base(out))
	if shared == "" {
		return build(root, pkg, out)
	}
	// A hard link of the published program: go build keeps it if its
	// build ID is what this source and these flags give, and otherwise
	// replaces it (a new file; the published one is never written to).
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	os.Link(shared, out)
	if err := build(root, pkg, out); err != nil {
		return err
	}
	if fi, err := os.Stat(shared); err == nil {
		if fo, err := os.Stat(out); err == nil && os.SameFile(fi, fo) {
			return nil
		}
	}
	// Published by a rename, so that another process links either the
	// old program or this one, whole.
	tmp := fmt.Sprintf("%s.%d.tmp", shared, os.Getpid())
	if err := os.Link(out, tmp); err == nil {
		if os.Rename(tmp, shared) != nil {
			os.Remove(tmp)
		}
	}
	return nil
}

// sharedBuild is where the run's processes publish pkg built in root
// with this process's build tags and Go environment, as name, or "" when
// BuildsVar is not set.
func sharedBuild(root, pkg, name string) string {
	dir := os.Getenv(BuildsVar)
	if dir == "" {
		return ""
	}
	key := sha256.Sum256([]byte(strings.Join([]string{root, pkg, buildTags(),
		os.Getenv("GOFLAGS"), os.Getenv("CGO_ENABLED"), os.Getenv("GOOS"), os.Getenv("GOARCH")}, "\x00")))
	d := filepath.Join(dir, hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return ""
	}
	return filepath.Join(d, name)
}

// build runs go build of pkg into out.
func build(root, pkg, out string) error {
	// With the test's own build tags: a test built -tags portable drives
	// programs built so, or two lock implementations would meet.
	// -buildvcs=false: the tests' programs report version "unknown" and are
	// no release wherever they are built — a clone with Go's default
	// -buildvcs=auto would stamp a pseudo-version, a worktree or a source
	// archive none (cli/version.go). Tests of the stamp build their own.
	args := []string{"build", "-buildvcs=false", "-o", out}
	if tags := buildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Binary is the saga-lsp binary, built once per test process, with
// saga-lsp-hook beside it as make build leaves them: the worker's runs in
// tests register the hook program (runs.HookProgram).
func Binary(tb testing.TB) string {
	tb.Helper()
	bin := Build(tb, "./cmd/saga-lsp")
	const hook = "./cmd/saga-lsp-hook"
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if err, ok := shared.errors[hook]; ok {
		tb.Fatal(err)
	}
	if _, ok := shared.built[hook]; !ok {
		out := filepath.Join(filepath.Dir(bin), "saga-lsp-hook")
		if err := goBuild(shared.moduleRoot(tb), hook, out); err != nil {
			shared.errors[hook] = err
			tb.Fatal(err)
		}
		shared.built[hook] = out
	}
	return bin
}

// CopyTree copies the tree src into a new temporary folder and returns it,
// symlinks resolved in its path (the path a server or an editor sees).
func CopyTree(tb testing.TB, src string) string {
	tb.Helper()
	dst, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	CopyInto(tb, src, dst)
	return dst
}

// CopyExample is CopyTree of the module's examples/<name>.
func CopyExample(tb testing.TB, name string) string {
	tb.Helper()
	return CopyTree(tb, filepath.Join(ModuleRoot(tb), "examples", name))
}

// CopyInto copies the tree src into dst (which may exist).
func CopyInto(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		tb.Fatalf("copy %s: %v", src, err)
	}
}

// CopyRepository copies the repository's tracked files, as they are in the
// working tree, into a new temporary folder and returns it: a fresh clone
// with this checkout's changes, without its git dir, for a test that runs
// the README's commands as a user would.
func CopyRepository(tb testing.TB) string {
	tb.Helper()
	root := ModuleRoot(tb)
	list, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		tb.Fatalf("git ls-files: %v", err)
	}
	clone := tb.TempDir()
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			tb.Fatal(err)
		}
		dst := filepath.Join(clone, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			tb.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(src)
			if err := os.Symlink(target, dst); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			tb.Fatal(err)
		}
	}
	return clone
}

// WriteFiles writes files (slash-separated path relative to root → text)
// under root, making their folders.
func WriteFiles(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// ReadFile is the text of the file at path; an error fails the test.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TreeSnapshot lists a tree, to compare before and after: every entry, its type and a regular file's bytes.
func TreeSnapshot(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			b.WriteString(p + " " + err.Error() + "\n")
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		b.WriteString(r + " " + d.Type().String())
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// FileText is the text of the file at path, or "(the error)" when it
// cannot be read: for what a failure shows.
func FileText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}

// CleanEnv is the test process's environment without anything that would
// steer saga-lsp, tmux or claude elsewhere, and with workers at the
// priority of what starts them: make test runs four packages at once on two
// cores, where a worker below the test processes around it would take
// several times longer than the tests' waits allow for
// (runs.EnvWorkerNice, docs/worker.md#priority). The priority's own tests
// and BenchmarkEpic200 ask for the default.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SAGA_") || k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "CLAUDE") ||
			strings.HasPrefix(k, "FAKE_") || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "SAGA_WORKER_NICE=0")
}

// Result is how a program ended.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs bin with args in dir with env (nil: CleanEnv) and stdin, and
// returns its output and exit code. A hang guard, not a budget: at most 5
// minutes (a worker run with the real Claude Code compiles the story's
// code cold, which took over 90 s on a loaded 2-core machine).
func Run(tb testing.TB, dir string, env []string, stdin string, bin string, args ...string) Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	if env == nil {
		env = CleanEnv()
	}
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		tb.Fatal(err)
	}
	return Result{out.String(), errb.String(), code}
}

// Golden compares got with the file at path; with UPDATE_GOLDEN=1 in the
// environment it rewrites the file instead.
func Golden(tb testing.TB, path, got string) {
	tb.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// WaitUntil polls cond until it holds or timeout passes, and reports
// whether it held: for states of other processes that send no event (a
// process gone, a lock released).
func WaitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// HostDir is a new directory outside the temp dir and every other place a
// check's sandbox hides wholesale (/tmp, /var/tmp, /run), in the user's
// ~/.cache — the passwd entry's home's when $HOME lies in such a place (a
// home under /tmp, as .ci/run gives) — removed at the end, its real path:
// for tests of a sandbox that replaces those places wholesale, whose files
// must be hidden by the sandbox's own rules rather than by where the test
// put them. ($XDG_CACHE_HOME is not used: Main points it into the temp
// dir.) Without such a place the test needs one (Needs).
func HostDir(tb testing.TB) string {
	tb.Helper()
	var homes []string
	if home, err := os.UserHomeDir(); err == nil {
		homes = append(homes, home)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes = append(homes, u.HomeDir)
	}
	var tried []string
	for _, home := range homes {
		parent := filepath.Join(home, ".cache")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			tried = append(tried, err.Error())
			continue
		}
		real, err := filepath.EvalSymlinks(parent)
		if err != nil || hiddenWholesale(real) {
			tried = append(tried, parent+" lies in a place hidden wholesale")
			continue
		}
		dir, err := os.MkdirTemp(real, "saga-host-")
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		tb.Cleanup(func() { removeAll(dir) })
		return dir
	}
	Needs(tb, "a writable ~/.cache outside /tmp, /var/tmp, /run and the temp dir, to hold the test's files: "+strings.Join(tried, "; "))
	return ""
}

// hiddenWholesale tells whether the real path p lies in a place a check's
// sandbox replaces whole (runs/verify/sandbox.go), or in the temp dir.
func hiddenWholesale(p string) bool {
	places := []string{"/tmp", "/var/tmp", "/run", "/var/run", os.TempDir()}
	for _, d := range places {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// buildTags are the -tags the running test binary was built with ("" for
// none).
func buildTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}
