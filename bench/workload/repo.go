package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// The large repository of issue 36 (docs/architecture.md#budgets): RepoFiles
// files, about a gigabyte, in one commit on main — a Go module and a Node
// package among many plain files — with one story of one task in .saga/,
// and a bare origin sharing its objects. Made with `git fast-import` (a
// stream of blobs and one commit) and one checkout: `git add` of 100,000
// files hashes and writes each through the index, several times slower.
const (
	RepoFiles   = 100_000
	RepoStory   = "s"
	RepoTask    = "t"
	RepoGoPkgs  = 100 // packages of the Go module under go/pkg/
	RepoJSFiles = 500 // modules of the Node package under web/src/
	repoSeed    = 36
	// The file sizes: uniform in [repoMinSize, repoMaxSize), mean ≈ 10 kB.
	repoMinSize = 1_000
	repoMaxSize = 20_000
)

// RepoChangeFile is the tracked plain file a benchmark's one-file change
// edits (it exists in every generation).
const RepoChangeFile = "docs/d000/f00000.md"

// RepoProtectedFile is a test of the Go module (a protected file,
// docs/worker.md#protected-files) a benchmark changes to have the final
// checks make their protected view.
const RepoProtectedFile = "go/pkg/p000/f_test.go"

// EnsureRepo makes dir hold the large repository and returns the paths of
// its checkout (dir/repo) and its bare origin (dir/origin.git). Like
// Ensure, a complete copy of this generator version is reused. The origin's
// URL is set again on every call: it must be absolute (the worker runs git
// in the worktrees, not beside the repository) and dir may have moved.
func EnsureRepo(dir string, gitBin string) (repo, origin string, err error) {
	return EnsureRepoOf(dir, gitBin, RepoFiles)
}

// EnsureRepoOf is EnsureRepo with files files in all (the same story, Go
// module and Node package; fewer plain files), for a comparison at a
// smaller size.
func EnsureRepoOf(dir, gitBin string, files int) (repo, origin string, err error) {
	marker := fmt.Sprintf("saga-lsp workload v%d: repository of %d files, seed %d\n", Version, files, repoSeed)
	if _, err := ensureWith(dir, marker, func(d string) error { return generateRepo(d, gitBin, files) }); err != nil {
		return "", "", err
	}
	repo, origin = filepath.Join(dir, "repo"), filepath.Join(dir, "origin.git")
	abs, err := filepath.Abs(origin)
	if err != nil {
		return "", "", err
	}
	if err := gitIn(gitBin, repo, nil, "remote", "set-url", "origin", abs); err != nil {
		return "", "", err
	}
	return repo, abs, nil
}

// gitIn runs git in dir, isolated from the user's configuration, with a
// fixed identity and dates so the same stream always gives the same commit.
func gitIn(gitBin, dir string, stdin io.Reader, args ...string) error {
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("workload: git %s: %w\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	return nil
}

func generateRepo(dir, gitBin string, files int) error {
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Bench"},
		{"config", "user.email", "bench@example.com"},
	} {
		if err := gitIn(gitBin, repo, nil, args...); err != nil {
			return err
		}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeRepoStream(pw, files)) }()
	// Compression 1: the objects are written once, read by checkouts;
	// level 1 makes the stream several times faster for a slightly larger
	// pack.
	if err := gitIn(gitBin, repo, pr, "-c", "pack.compression=1", "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	if err := gitIn(gitBin, repo, nil, "-c", "checkout.workers=0", "reset", "-q", "--hard", "main"); err != nil {
		return err
	}
	// The origin borrows the repository's objects (a relative alternates
	// path, so the pair survives being renamed into place).
	origin := filepath.Join(dir, "origin.git")
	if err := gitIn(gitBin, dir, nil, "init", "-q", "--bare", "-b", "main", origin); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(origin, "objects", "info", "alternates"), []byte("../../repo/.git/objects\n"), 0o644); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := gitIn(gitBin, repo, nil, "remote", "add", "origin", origin); err != nil {
		return err
	}
	if err := gitIn(gitBin, repo, nil, "push", "-q", "-u", "origin", "main"); err != nil {
		return err
	}
	return nil
}

// writeRepoStream writes the fast-import stream: every file's blob inline
// in one commit. Content is drawn from a pool of text so that it
// compresses like source and prose, with a unique first line per file.
func writeRepoStream(w io.Writer, files int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(repoSeed, 1))
	pool := textPool(rng, 1<<20)
	fmt.Fprintf(bw, "commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 20\na large repository\n\n")
	put := func(rel string, data []byte) {
		fmt.Fprintf(bw, "M 644 inline %s\ndata %d\n", rel, len(data))
		bw.Write(data)
		bw.WriteByte('\n')
	}
	body := func(header string) []byte {
		n := repoMinSize + rng.IntN(repoMaxSize-repoMinSize)
		off := rng.IntN(len(pool) - n)
		return append([]byte(header+"\n"), pool[off:off+n]...)
	}
	n := 0
	// The story: one task, with no check (what budget 1 measures is the
	// worker's own steps).
	story, _ := store.MarshalIndent(store.StoryDoc{ID: RepoStory, Title: "Edit one file", Description: "Change one line of " + RepoChangeFile + "."})
	task, _ := store.MarshalIndent(store.TaskDoc{ID: RepoTask, Subject: "Edit the file", Description: "Change one line.", Status: store.StatusPending, BlockedBy: []string{}})
	put(store.StoryFileRel(RepoStory), story)
	put(store.TaskFileRel(RepoStory, RepoTask), task)
	n += 2
	// The Go module.
	put("go/go.mod", []byte("module example.com/big\n\ngo 1.22\n"))
	n++
	for p := range RepoGoPkgs {
		for f := range 5 {
			put(fmt.Sprintf("go/pkg/p%03d/f%d.go", p, f), fmt.Appendf(nil, "package p%03d\n\n// F%d returns its argument.\nfunc F%d(x int) int { return x + %d }\n", p, f, f, f))
		}
		put(fmt.Sprintf("go/pkg/p%03d/f_test.go", p), fmt.Appendf(nil, "package p%03d\n\nimport \"testing\"\n\nfunc TestF0(t *testing.T) {\n\tif F0(1) != 1 {\n\t\tt.Fatal(\"F0\")\n\t}\n}\n", p))
		n += 6
	}
	// The Node package.
	put("web/package.json", []byte(`{"name": "big", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}}`+"\n"))
	put("web/package-lock.json", []byte(`{"name": "big", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "big", "version": "1.0.0"}}}`+"\n"))
	n += 2
	for i := range RepoJSFiles {
		put(fmt.Sprintf("web/src/m%03d.js", i), body(fmt.Sprintf("// module %d", i)))
		n++
		if i%5 == 0 {
			put(fmt.Sprintf("web/test/m%03d.test.js", i), fmt.Appendf(nil, "const test = require('node:test');\ntest('m%03d', () => {});\n", i))
			n++
		}
	}
	// Plain files, 100 to a folder.
	exts := []string{".md", ".txt", ".csv", ".json", ".html"}
	for i := 0; n < files; i++ {
		rel := fmt.Sprintf("docs/d%03d/f%05d%s", i/100, i, exts[i%len(exts)])
		put(rel, body(fmt.Sprintf("# file %d", i)))
		n++
	}
	fmt.Fprintf(bw, "\ndone\n")
	return bw.Flush()
}

// textPool is size bytes of lines of words.
func textPool(rng *rand.Rand, size int) []byte {
	words := strings.Fields("the a of story task worker commit tree file folder change check test build cache " +
		"branch merge push pull request review agent run step budget time floor measure status view guard link " +
		"special protected hook server editor language index object blob pack ref")
	var b bytes.Buffer
	for b.Len() < size {
		for w := 3 + rng.IntN(10); w > 0; w-- {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString(fmt.Sprint(rng.IntN(1000)))
		b.WriteByte('\n')
	}
	return b.Bytes()
}
