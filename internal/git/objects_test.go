package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// plantRepo is a repository whose main has two commits: the first holds
// .saga/stories/s/t.json with a strict check, the second a change
// elsewhere; and a commit on another branch whose task file carries a
// weakened check (what an agent would want read instead).
type plantRepo struct {
	root               string
	first, real, evil  string // commits
	realBlob, realTask string
}

const (
	strictTask = `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": ["false"]}` + "\n"
	weakTask   = `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}` + "\n"
)

func newPlantRepo(t *testing.T) plantRepo {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/s/t.json": strictTask, "README": "one\n"})
	testkit.InitRepo(t, root)
	p := plantRepo{root: root, first: testkit.Git(t, root, "rev-parse", "HEAD"), realTask: strictTask}
	testkit.WriteFiles(t, root, map[string]string{"README": "two\n"})
	testkit.Git(t, root, "commit", "-qam", "two")
	p.real = testkit.Git(t, root, "rev-parse", "HEAD")
	p.realBlob = testkit.Git(t, root, "rev-parse", p.real+":.saga/stories/s/t.json")
	testkit.Git(t, root, "checkout", "-q", "-b", "evil")
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/s/t.json": weakTask})
	testkit.Git(t, root, "commit", "-qam", "weaken")
	p.evil = testkit.Git(t, root, "rev-parse", "HEAD")
	testkit.Git(t, root, "checkout", "-q", "main")
	return p
}

// readTask reads the task file at the real commit the two ways saga-lsp
// reads at a commit: git show (any Run) and FilesAt.
func (p plantRepo) readTask(t *testing.T) (shown string, files map[string][]byte, err error) {
	t.Helper()
	g := Repo{Dir: p.root}
	ctx := context.Background()
	shown, _ = g.Raw(ctx, "show", p.real+":.saga/stories/s/t.json")
	files, err = g.FilesAt(ctx, p.real, ".saga/stories/s")
	return shown, files, err
}

// Attack 4 of issue 22 and its kin: a ref in refs/replace/ naming the
// commit whose checks count, a graft, an alternates file with a forged
// object. Each planted in turn, saga-lsp's git reads what the commit holds
// (or refuses: never the planted content).
func TestPlantedObjectsIgnored(t *testing.T) {
	t.Run("replace ref", func(t *testing.T) {
		p := newPlantRepo(t)
		testkit.Git(t, p.root, "update-ref", "refs/replace/"+p.real, p.evil)
		if got := testkit.Git(t, p.root, "show", p.real+":.saga/stories/s/t.json"); got != strings.TrimSpace(weakTask) {
			t.Fatalf("plain git does not see the replacement (the test proves nothing): %s", got)
		}
		shown, files, err := p.readTask(t)
		if err != nil || shown != strictTask || string(files["t.json"]) != strictTask {
			t.Errorf("read through the replace ref: show %q, FilesAt %q, %v", shown, files["t.json"], err)
		}
	})
	t.Run("graft", func(t *testing.T) {
		p := newPlantRepo(t)
		// The real commit grafted onto the weakened one: its first parent,
		// the merge-base with evil, every walk of history changes.
		os.WriteFile(filepath.Join(p.root, ".git", "info", "grafts"), []byte(p.real+" "+p.evil+"\n"), 0o644)
		if got := testkit.Git(t, p.root, "-c", "advice.graftFileDeprecated=false", "rev-parse", p.real+"^"); got != p.evil {
			t.Fatalf("plain git does not follow the graft (the test proves nothing): %s", got)
		}
		g := Repo{Dir: p.root}
		ctx := context.Background()
		if got, err := g.Run(ctx, "rev-parse", p.real+"^"); err != nil || got != p.first {
			t.Errorf("the parent through the graft: %q %v, want %s", got, err, p.first)
		}
		if got, err := g.Run(ctx, "merge-base", p.real, p.evil); err != nil || got != p.real {
			t.Errorf("merge-base through the graft: %q %v, want %s", got, err, p.real)
		}
		if out, err := g.Raw(ctx, "log", "--format=%H", p.real); err != nil || strings.Contains(out, p.evil) {
			t.Errorf("log through the graft: %q %v", out, err)
		}
	})
	t.Run("alternate", func(t *testing.T) {
		// A clone sharing its origin's objects through an alternates file
		// (git clone --shared, --reference), as a repository may
		// legitimately be; the planted file puts a folder first that holds
		// a forged object under the real task file's name.
		p := newPlantRepo(t)
		clone := filepath.Join(t.TempDir(), "clone")
		testkit.Git(t, p.root, "clone", "-q", "--shared", p.root, clone)
		evilObjects := t.TempDir()
		writeLoose(t, evilObjects, p.realBlob, "blob", []byte(weakTask))
		alternates := filepath.Join(clone, ".git", "objects", "info", "alternates")
		legit, err := os.ReadFile(alternates)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(alternates, append([]byte(evilObjects+"\n"), legit...), 0o644)
		if got := testkit.Git(t, clone, "cat-file", "blob", p.realBlob); got != strings.TrimSpace(weakTask) {
			t.Fatalf("plain git does not read the forged object (the test proves nothing): %s", got)
		}
		_, err = Repo{Dir: clone}.FilesAt(context.Background(), p.real, ".saga/stories/s")
		if !errors.Is(err, ErrBadObject) {
			t.Errorf("FilesAt through the planted alternate: %v, want %v", err, ErrBadObject)
		}
		// The legitimate alternates file alone: read as committed.
		os.WriteFile(alternates, legit, 0o644)
		files, err := Repo{Dir: clone}.FilesAt(context.Background(), p.real, ".saga/stories/s")
		if err != nil || string(files["t.json"]) != strictTask {
			t.Errorf("FilesAt with the clone's own alternates: %q %v", files["t.json"], err)
		}
	})
}

// writeLoose stores content as a loose object named id (whatever its real
// hash) in an objects folder.
func writeLoose(t *testing.T, objects, id, typ string, content []byte) {
	t.Helper()
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	fmt.Fprintf(z, "%s %d\x00", typ, len(content))
	z.Write(content)
	z.Close()
	dir := filepath.Join(objects, id[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id[2:]), b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// FilesAt lists a folder's regular files at a commit; an absent folder is
// no files; a name that is not a full hash is refused.
func TestFilesAt(t *testing.T) {
	p := newPlantRepo(t)
	g := Repo{Dir: p.root}
	ctx := context.Background()
	files, err := g.FilesAt(ctx, p.real, "")
	if err != nil || string(files["README"]) != "two\n" || files[".saga"] != nil {
		t.Errorf("top: %v %v", files, err)
	}
	if files, err := g.FilesAt(ctx, p.real, ".saga/stories/nope"); err != nil || len(files) != 0 {
		t.Errorf("absent folder: %v %v", files, err)
	}
	if _, err := g.FilesAt(ctx, "main", ""); err == nil {
		t.Error("a ref name was accepted as a commit hash")
	}
	if c, err := g.Commit(ctx, "main"); err != nil || c != p.real {
		t.Errorf("Commit(main) = %q %v", c, err)
	}
}

// FilesAtRevs reads a folder at many revisions in one batch: each
// revision's own content, nil for a folder or revision that is not there.
func TestFilesAtRevs(t *testing.T) {
	p := newPlantRepo(t)
	g := Repo{Dir: p.root}
	got, err := g.FilesAtRevs(context.Background(), []RevDir{
		{Rev: "main", Dir: ".saga/stories/s"}, {Rev: "refs/heads/evil", Dir: ".saga/stories/s/"},
		{Rev: "main", Dir: ".saga/stories/none"}, {Rev: "no-such-branch", Dir: ".saga/stories/s"}, {Rev: p.first, Dir: ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || string(got[0]["t.json"]) != strictTask || string(got[1]["t.json"]) != weakTask ||
		got[2] != nil || got[3] != nil || string(got[4]["README"]) != "one\n" || len(got[4]) != 1 {
		t.Fatalf("FilesAtRevs: %q", got)
	}
}

// FilesAtRevs asks one git process in turns, the folders then their
// files: a request larger than a pipe holds passes, and a
// batch that git cuts short is an error, not a wait.
func TestFilesAtRevsInTurns(t *testing.T) {
	p := newPlantRepo(t)
	g := Repo{Dir: p.root}
	var dirs []RevDir
	for range 800 { // ≈ 80 KB of names
		dirs = append(dirs, RevDir{Rev: p.real, Dir: ".saga/stories/s"}, RevDir{Rev: p.real, Dir: ""})
	}
	got, err := g.FilesAtRevs(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(got); i += 2 {
		if string(got[i]["t.json"]) != strictTask || string(got[i+1]["README"]) != "two\n" {
			t.Fatalf("FilesAtRevs #%d: %q %q", i, got[i], got[i+1])
		}
	}
	// A git that ends before answering all: an error naming the batch.
	fake := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nhead -c 1 >/dev/null; echo 'fatal: gone' >&2; exit 128\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (Repo{Dir: p.root, Bin: fake}).FilesAtRevs(context.Background(), dirs); err == nil || !strings.Contains(err.Error(), "fatal: gone") {
		t.Errorf("a batch cut short: %v", err)
	}
}

// CommitsNotIn is the history of the tips that into lacks, with parents:
// evil's commit, whose parent is main's tip; nothing for a tip in main.
func TestCommitsNotIn(t *testing.T) {
	p := newPlantRepo(t)
	got, err := Repo{Dir: p.root}.CommitsNotIn(context.Background(), []string{p.evil, p.first}, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[p.evil]) != 1 || got[p.evil][0] != p.real {
		t.Fatalf("CommitsNotIn: %v (evil %s, real %s)", got, p.evil, p.real)
	}
}

// CommitsNotIn gives git its tips on stdin, never as arguments: as
// arguments git looks for a ref named like each (a dozen failed stats a
// tip, most of the process at 200 story branches), and a long list would
// pass a command line's limit. Something not a revision is refused.
func TestCommitsNotInTipsOnStdin(t *testing.T) {
	p := newPlantRepo(t)
	dir := t.TempDir()
	argv, wrap := filepath.Join(dir, "argv"), filepath.Join(dir, "git")
	if err := os.WriteFile(wrap, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >> '"+argv+"'\nexec git \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := Repo{Dir: p.root, Bin: wrap}
	got, err := g.CommitsNotIn(context.Background(), []string{p.evil, p.first}, "main")
	if err != nil || len(got) != 1 || len(got[p.evil]) != 1 || got[p.evil][0] != p.real {
		t.Fatalf("CommitsNotIn: %v, %v (evil %s, real %s)", got, err, p.evil, p.real)
	}
	args, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []string{p.evil, p.first} {
		if strings.Contains(string(args), tip) {
			t.Errorf("tip %s on git's command line:\n%s", tip, args)
		}
	}
	if _, err := g.CommitsNotIn(context.Background(), []string{"--all"}, "main"); err == nil {
		t.Error("an option as a tip: no error")
	}
}

// BlobsAtRef reads the files at the commit a branch names, in one
// process: those that are files there, nothing for a path absent or a
// folder; a name that is not a commit is an error, never a read at
// something else.
func TestBlobsAtRef(t *testing.T) {
	p := newPlantRepo(t)
	g := Repo{Dir: p.root}
	ctx := context.Background()
	got, err := g.BlobsAtRef(ctx, "refs/heads/evil", []string{".saga/stories/s/t.json", "README", "absent", ".saga/stories/s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[".saga/stories/s/t.json"].Data) != weakTask || string(got["README"].Data) != "two\n" {
		t.Fatalf("BlobsAtRef(evil): %v", got)
	}
	if got, err := g.BlobsAtRef(ctx, "refs/heads/main", []string{".saga/stories/s/t.json"}); err != nil || string(got[".saga/stories/s/t.json"].Data) != p.realTask {
		t.Fatalf("BlobsAtRef(main): %v, %v", got, err)
	}
	for _, ref := range []string{"refs/heads/none", "-h", "main:README", p.realBlob} {
		if got, err := g.BlobsAtRef(ctx, ref, []string{"README"}); err == nil {
			t.Errorf("BlobsAtRef(%q) read %v", ref, got)
		}
	}
}

// TestKindAtRef: each kind of tree entry, read at a branch, and refs git
// would take for something else refused.
func TestKindAtRef(t *testing.T) {
	root := t.TempDir()
	testkit.Git(t, root, "init", "-q")
	testkit.WriteFiles(t, root, map[string]string{"f.txt": "file\n", "run.sh": "#!/bin/sh\n", "d/in.txt": "in\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(root, "d", "link")); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, root, "add", "-A")
	commit := func() {
		testkit.Git(t, root, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "entries")
	}
	commit()
	tip := strings.TrimSpace(testkit.Git(t, root, "rev-parse", "HEAD"))
	testkit.Git(t, root, "update-index", "--add", "--cacheinfo", "160000,"+tip+",sub")
	commit()
	testkit.Git(t, root, "branch", "story/x")
	g, ctx := Repo{Dir: root}, context.Background()
	for path, want := range map[string]EntryKind{
		"f.txt": RegularFile, "run.sh": RegularFile, "d": Folder, "d/in.txt": RegularFile,
		"d/link": LinkOrSubmodule, "sub": LinkOrSubmodule, "absent": NoEntry, "d/link/x": NoEntry, "f.txt/x": NoEntry,
	} {
		if got, err := g.KindAtRef(ctx, "refs/heads/story/x", path); err != nil || got != want {
			t.Errorf("KindAtRef(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	for _, ref := range []string{"refs/heads/none", "-h", "story/x:f.txt", ""} {
		if got, err := g.KindAtRef(ctx, ref, "f.txt"); err == nil {
			t.Errorf("KindAtRef(%q) = %v", ref, got)
		}
	}
}
