package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// ErrNoWorkspace is returned by FindRoot when no .saga/ folder is found.
var ErrNoWorkspace = errors.New("no .saga/ folder found")

// FindRoot returns the nearest ancestor of dir (dir included) that contains
// a .saga/ folder.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find workspace root from %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".saga")); err == nil && fi.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w in %s or any parent folder: run inside a SAGA project, pass --root DIR, or create one with `saga-lsp new story <name> --title …`", ErrNoWorkspace, abs)
		}
	}
}

// entry is one file to load: its path relative to the root, or why it cannot be.
type entry struct {
	rel  string
	kind FileKind
	bad  string // set when listing already found the entry unusable
}

// Load reads and checks the whole .saga/ tree under root, parsing files on
// as many goroutines as there are CPUs. Unreadable entries become
// unreadable-file diagnostics; only a root that cannot be listed at all is an
// error.
func (p *Parser) Load(root string) (*Workspace, error) { return p.LoadKeeping(root, nil) }

// Kept is the files a load of one root read, each with the stamp it had
// then, for the next load of that root (LoadKeeping): a file whose stamp is
// the same is taken as it was, not read and parsed again. The epic
// runner's, which loads the workspace at every step while its agents
// change a few files (docs/architecture.md#loading). Only a
// story folder's regular files are kept — what is read through the
// folder's descriptor, which the load opens and checks each time — and
// only with a stamp older than the clock's grain (filesafe.Settled).
type Kept struct {
	files map[string]keptFile // rel →
}

type keptFile struct {
	stamp filesafe.Stamp
	file  *File
}

// LoadKeeping is Load taking from k what did not change since the load
// that filled it, and keeping in k what this one read; a nil k keeps
// nothing.
func (p *Parser) LoadKeeping(root string, k *Kept) (*Workspace, error) {
	sagaDir := filepath.Join(root, ".saga")
	fi, err := os.Stat(sagaDir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w in %s: pass --root DIR pointing at a folder that contains .saga/", ErrNoWorkspace, root)
	}
	c := filesafe.NewConfiner(root)
	if why := c.CheckPath(sagaDir, ".saga"); why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	storyDirs, top, err := listSaga(root, c)
	if err != nil {
		return nil, err
	}
	// Jobs: each story folder (listed by the worker that takes it, so
	// listing runs in parallel too), then each top-level entry.
	results := make([][]*File, len(storyDirs)+len(top))
	var wg sync.WaitGroup
	next := make(chan int)
	workers := max(1, runtime.GOMAXPROCS(0))
	var kept []map[string]keptFile // each worker's, merged into k after
	var now time.Time
	if k != nil {
		kept, now = make([]map[string]keptFile, workers), time.Now()
	}
	for w := range workers {
		wg.Go(func() {
			// A load that keeps reads few files: each in chunks of its
			// own would keep a chunk alive for every file that changed
			// once (the runner's memory grew by 100 MB over a run).
			l := loader{p: p, root: root, shared: k == nil || k.files == nil, c: c}
			if k != nil {
				l.was, l.kept, l.now = k.files, map[string]keptFile{}, now
				kept[w] = l.kept
			}
			for i := range next {
				if i < len(storyDirs) {
					results[i] = l.loadStory(storyDirs[i])
				} else {
					results[i] = []*File{l.load(top[i-len(storyDirs)])}
				}
			}
		})
	}
	for i := range results {
		next <- i
	}
	close(next)
	wg.Wait()
	if k != nil {
		k.files = kept[0]
		for _, m := range kept[1:] {
			maps.Copy(k.files, m)
		}
	}
	rest := make([]*File, len(top)) // never a story's files: listSaga lists story folders apart
	for i, r := range results[len(storyDirs):] {
		rest[i] = r[0]
	}
	return build(root, storyDirs, results[:len(storyDirs)], rest), nil
}

// loader reads and parses files for a load. A story folder is listed and
// its files opened through one descriptor (openat), so no path is built
// per file. When shared (one goroutine's part of a whole workspace's load),
// the files it reads share chunks of bytes and their trees come from one
// jsonc.Batch: a file of a few hundred bytes costs no size-class rounding,
// and the parser's scratch space is reused. A chunk lives as long as any
// file read into it, which suits a workspace's files (they are replaced one
// at a time, if at all) but not one story's, loaded on its own.
type loader struct {
	p      *Parser
	root   string
	c      filesafe.Confiner // what links may lead to
	shared bool
	docs   jsonc.Batch // when shared
	bytes  []byte      // when shared: the current chunk; files are read into its free tail
	paths  []byte      // when shared: the current chunk of paths (path)
	dirBuf []byte      // getdents buffer
	names  []string    // scratch: a folder's names

	// LoadKeeping's: the files the last load kept (read only: shared by
	// the workers), what this worker keeps, and the load's time.
	was, kept map[string]keptFile
	now       time.Time
}

// byteChunk is the size of a loader's chunks; a file over a quarter of it
// gets its own buffer.
const byteChunk = 256 << 10

// load loads one entry of the listing of .saga/ (an epic file, or what is
// already known to be unusable or misplaced).
func (l *loader) load(e entry) *File {
	switch {
	case e.bad != "":
		return Unreadable(e.rel, e.bad)
	case e.kind == KindMisplaced:
		return Misplaced(e.rel)
	}
	return l.loadAt(filesafe.CWD, filepath.Join(l.root, filepath.FromSlash(e.rel)), e.rel, e.kind)
}

// loadStory lists one story folder (relative to the root) and loads the
// files the model reads, in name order. Files that are not ours (notes,
// images, temp files of atomic writes) are skipped; a temp file whose writer
// was killed is removed as it is seen.
func (l *loader) loadStory(rel string) []*File {
	abs := filepath.Join(l.root, filepath.FromSlash(rel))
	// Not following first: a story folder that is no link (the common
	// case) needs no more checking — the folders above it were checked when
	// .saga was listed. Else what was opened is checked, not what a path
	// said before: a link swapped in since (an agent's worktree copy) is
	// caught here; a worktree's copy, which its agent controls up to the
	// worktree, always is.
	dir, linked, err := filesafe.OpenFolder(abs)
	if err == nil {
		defer filesafe.CloseFolder(dir)
		if linked || strings.HasPrefix(rel, WorktreesRel+"/") {
			var real string
			if real, err = l.c.CheckFd(dir, abs); err == nil {
				linked = real != filepath.Join(l.c.Root(), filepath.FromSlash(rel))
			}
		}
		if err == nil {
			err = l.list(dir)
		}
	}
	if target, ok := filesafe.IsOutside(err); ok {
		return []*File{Unreadable(rel+"/story.json", filesafe.OutsideProblem(rel, target))}
	}
	if err != nil {
		return []*File{Unreadable(rel+"/story.json", fmt.Sprintf("cannot list story folder %s: %v; fix its permissions", rel, err))}
	}
	files := make([]*File, 0, len(l.names))
	for _, name := range l.names {
		frel := l.path(rel, name)
		kind, _, _ := Classify(frel)
		if kind == KindOther {
			if !linked { // removed by path: only where the path is the folder
				filesafe.RemoveStaleTemp(abs, name)
			}
			continue
		}
		files = append(files, l.loadAt(dir, name, frel, kind))
	}
	clear(l.names)
	return files
}

// loadAt loads the file name (relative to the folder dir, or a path with
// cwd) whose path from the root is rel.
func (l *loader) loadAt(dir filesafe.Folder, name, rel string, kind FileKind) *File {
	if kind == KindJournal {
		kind, owner, name := Classify(rel)
		return &File{Rel: rel, Kind: kind, Owner: owner, Name: name, Version: -1}
	}
	var stamp filesafe.Stamp
	stamped := false
	if l.kept != nil && dir != filesafe.CWD {
		// Stamped before the read: a write meanwhile leaves the kept
		// stamp older than the file, which the next load reads again.
		if stamp, stamped = filesafe.StampAt(dir, name, l.now); stamped {
			if k, ok := l.was[rel]; ok && k.stamp.Same(stamp) {
				l.kept[k.file.Rel] = k
				return k.file
			}
		}
	}
	f := l.read(dir, name, rel, kind)
	if stamped && f.ReadErr == "" {
		l.kept[rel] = keptFile{stamp, f}
	}
	return f
}

// read reads and parses the file name of dir.
func (l *loader) read(dir filesafe.Folder, name, rel string, kind FileKind) *File {
	src, isDir, why := filesafe.ReadBoundedAt(dir, name, rel, l.space, &l.c)
	if isDir {
		why = fmt.Sprintf("%s is a folder, but a %s file was expected; rename it", rel, kind)
	}
	if why != "" {
		return Unreadable(rel, why)
	}
	if len(l.bytes) < cap(l.bytes) && unsafe.SliceData(src) == &l.bytes[:cap(l.bytes)][len(l.bytes)] {
		l.bytes = l.bytes[:len(l.bytes)+len(src)] // read into the chunk: its bytes are taken
	}
	src = src[:len(src):len(src)]
	if !l.shared {
		return l.p.parse(rel, src, -1, nil)
	}
	return l.p.parse(rel, src, -1, &l.docs)
}

// pathChunk is the size of a loader's chunks of paths.
const pathChunk = 16 << 10

// path returns dir + "/" + name. When shared it is carved from a chunk of
// paths, so that 88,000 of them (74 bytes on average) cost no size-class
// rounding each (0.6 MB); a chunk is never written where it was carved.
func (l *loader) path(dir, name string) string {
	n := len(dir) + 1 + len(name)
	if !l.shared || n > pathChunk/4 {
		return dir + "/" + name
	}
	if cap(l.paths)-len(l.paths) < n {
		l.paths = make([]byte, 0, pathChunk)
	}
	start := len(l.paths)
	l.paths = append(append(append(l.paths, dir...), '/'), name...)
	return unsafe.String(&l.paths[start], n)
}

// space returns an empty buffer of capacity n or more: the free tail of the
// current chunk (a new chunk when it is too short), or a buffer of its own
// when n is large or the loader is not shared.
func (l *loader) space(n int) []byte {
	if !l.shared || n > byteChunk/4 {
		return make([]byte, 0, n)
	}
	if cap(l.bytes)-len(l.bytes) < n {
		l.bytes = make([]byte, 0, byteChunk)
	}
	return l.bytes[len(l.bytes):len(l.bytes):cap(l.bytes)]
}

// listSaga lists story folders (relative to the root: the main copies, then
// the worktree copies) and the epic files, plus entries that are already
// known to be unusable or misplaced. The layout has a fixed depth, so
// nothing recurses and symlink loops cannot trap the walk. Of a worktree
// (.saga/worktrees/<id>/, a whole checkout) only its copy of story <id> is
// read, as upstream SAGA does.
func listSaga(root string, c filesafe.Confiner) (storyDirs []string, entries []entry, err error) {
	des, err := os.ReadDir(filepath.Join(root, ".saga"))
	if err != nil {
		return nil, nil, fmt.Errorf("list .saga: %w", err)
	}
	for _, de := range des {
		rel := ".saga/" + de.Name()
		if kind, _, _ := Classify(rel); kind == KindMisplaced {
			entries = append(entries, entry{rel: rel, kind: kind})
		}
	}
	err = listChildren(root, ".saga/stories", c, &entries,
		func(rel string) {
			if kind, _, _ := Classify(rel); kind == KindMisplaced {
				entries = append(entries, entry{rel: rel, kind: kind})
			}
		},
		func(rel, name string) {
			if !utf8.ValidString(name) {
				entries = append(entries, entry{rel: rel, bad: fmt.Sprintf("story folder name %q is not valid UTF-8; rename it", name)})
				return
			}
			storyDirs = append(storyDirs, rel)
		})
	if err != nil {
		return nil, nil, err
	}
	des = nil
	worktrees := filepath.Join(root, filepath.FromSlash(WorktreesRel))
	if why := c.CheckPath(worktrees, WorktreesRel); why != "" {
		entries = append(entries, entry{rel: WorktreesRel, bad: why})
	} else if des, err = os.ReadDir(worktrees); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("list .saga/worktrees: %w", err)
	}
	for _, de := range des {
		id := de.Name()
		if !ValidCanonical(id) {
			continue // not a story's worktree
		}
		rel := WorktreeStoryDirRel(id)
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if why := c.CheckBelow(worktrees, strings.TrimPrefix(rel, WorktreesRel+"/"), rel); why != "" {
			entries = append(entries, entry{rel: rel, bad: why})
		} else if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
			storyDirs = append(storyDirs, rel)
		}
	}
	err = listChildren(root, ".saga/epics", c, &entries,
		func(rel string) {
			if kind, _, _ := Classify(rel); kind == KindEpic {
				entries = append(entries, entry{rel: rel, kind: kind})
			}
		},
		func(rel, _ string) {
			frel := rel + "/epic.json"
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(frel))); err == nil || !errors.Is(err, fs.ErrNotExist) {
				entries = append(entries, entry{rel: frel, kind: KindEpic})
			}
		})
	if err != nil {
		return nil, nil, err
	}
	return storyDirs, entries, nil
}

// listChildren lists the folder rel of root (a missing one lists nothing):
// an entry that cannot be told a file or a folder becomes a bad entry, dot
// entries are passed over, and the rest go to file or dir.
func listChildren(root, rel string, c filesafe.Confiner, entries *[]entry, file func(rel string), dir func(rel, name string)) error {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if why := c.CheckPath(abs, rel); why != "" {
		*entries = append(*entries, entry{rel: rel, bad: why})
		return nil
	}
	des, err := os.ReadDir(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list %s: %w", rel, err)
	}
	for _, de := range des {
		crel := rel + "/" + de.Name()
		isDir, why := dirEntryIsDir(root, crel, de, c)
		switch {
		case why != "":
			*entries = append(*entries, entry{rel: crel, bad: why})
		case de.Name()[0] == '.':
		case isDir:
			dir(crel, de.Name())
		default:
			file(crel)
		}
	}
	return nil
}

// dirEntryIsDir follows a symlink to tell whether the entry is a folder;
// a link out of the workspace is not followed but refused (why).
func dirEntryIsDir(root, rel string, de fs.DirEntry, c filesafe.Confiner) (bool, string) {
	if de.Type()&fs.ModeSymlink == 0 {
		return de.IsDir(), ""
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if why := c.CheckPath(abs, rel); why != "" {
		return false, why
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return false, filesafe.ReadProblem(rel, err)
	}
	return fi.IsDir(), ""
}

// LoadStory reads one story folder (story.json, tasks, journal) without
// scanning the rest of the workspace: the worker and the hook need only it.
// Cross-file findings about epics are not computed.
func (p *Parser) LoadStory(root, story string) (*Story, error) {
	if !ValidCanonical(story) {
		return nil, fmt.Errorf("invalid story name %q", story)
	}
	dir := filepath.Join(root, ".saga", "stories", story)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("no story %q: %s does not exist", story, dir)
	}
	l := loader{p: p, root: root, c: filesafe.NewConfiner(root)}
	return assembleStory(StoryDirRel(story), l.loadStory(StoryDirRel(story))), nil
}
