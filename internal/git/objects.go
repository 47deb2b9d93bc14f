package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
)

// Reads at a commit that decide what counts (a task's checks, the
// definitions) trust nothing but the commit's hash: every object from the
// commit down to each file is checked against the hash that names it. git
// itself honours an alternates file (objects/info/alternates) it cannot be
// told to ignore, and does not check a loose object's content when it
// reads it; a forged object found that way fails here, as would a
// replacement that slipped past GIT_NO_REPLACE_OBJECTS.

// ErrBadObject is wrapped by FilesAt's error when an object's content does
// not match its hash.
var ErrBadObject = errors.New("an object does not match its hash")

// FilesAt returns the regular files directly in dir (a slash path from the
// repository's top; "" is the top) as committed at commit (a full hash),
// by name. A dir absent at commit gives none and no error.
func (g Repo) FilesAt(ctx context.Context, commit, dir string) (map[string][]byte, error) {
	if !fullHash(commit) {
		return nil, fmt.Errorf("read %s at %q: not a full commit hash", dir, commit)
	}
	c, err := g.catFile(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	raw, err := c.object(commit, "commit")
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	treeID, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || len(treeID) != len(commit) {
		return nil, fmt.Errorf("commit %s: no tree line", commit)
	}
	tree := string(treeID)
	for _, name := range strings.Split(strings.Trim(dir, "/"), "/") {
		if name == "" {
			continue
		}
		entries, err := c.tree(tree)
		if err != nil {
			return nil, err
		}
		next, found := "", false
		for _, e := range entries {
			if e.name == name && e.mode == "40000" {
				next, found = e.id, true
			}
		}
		if !found {
			return nil, nil
		}
		tree = next
	}
	entries, err := c.tree(tree)
	if err != nil {
		return nil, err
	}
	var ids []string
	var names []string
	for _, e := range entries {
		if e.regular() {
			ids, names = append(ids, e.id), append(names, e.name)
		}
	}
	blobs, err := c.objects(ids, "blob")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for i, n := range names {
		out[n] = blobs[i]
	}
	return out, nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode, name, id string
}

// regular tells a regular file, executable or not, from a link, a folder
// or a submodule.
func (e treeEntry) regular() bool { return e.mode == "100644" || e.mode == "100755" }

// parseTree parses the content of tree object id.
func parseTree(id string, raw []byte) ([]treeEntry, error) {
	size := len(id) / 2 // the raw hash in a tree entry
	var out []treeEntry
	for len(raw) > 0 {
		head, rest, ok := bytes.Cut(raw, []byte{0})
		mode, name, ok2 := bytes.Cut(head, []byte(" "))
		if !ok || !ok2 || len(rest) < size {
			return nil, fmt.Errorf("tree %s: %w (cannot parse it)", id, ErrBadObject)
		}
		out = append(out, treeEntry{mode: string(mode), name: string(name), id: hex.EncodeToString(rest[:size])})
		raw = rest[size:]
	}
	return out, nil
}

// objectHash is git's name for an object: the hash of "<type> <size>\0"
// and the content, SHA-1 or SHA-256 by the length of the names in use.
func objectHash(typ string, content []byte, hexLen int) string {
	var h hash.Hash
	if hexLen == sha256.Size*2 {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	fmt.Fprintf(h, "%s %d\x00", typ, len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// fullHash tells a full SHA-1 or SHA-256 object name in lower-case hex.
func fullHash(s string) bool {
	if len(s) != sha1.Size*2 && len(s) != sha256.Size*2 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Commit resolves rev to a full commit hash (rev-parse rev^{commit}).
func (g Repo) Commit(ctx context.Context, rev string) (string, error) {
	out, err := g.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || !fullHash(out) {
		return "", fmt.Errorf("%s is not a commit of the repository in %s", rev, g.Dir)
	}
	return out, nil
}

// Blob is a file as committed: its content and whether it is executable.
type Blob struct {
	Data []byte
	Exec bool
}

// BlobsAt returns the regular files at paths (slash paths from the
// repository's top) as committed at commit (a full hash), every object
// checked against its hash like FilesAt. A path that is not a regular file
// at commit is left out.
func (g Repo) BlobsAt(ctx context.Context, commit string, paths []string) (map[string]Blob, error) {
	if !fullHash(commit) {
		return nil, fmt.Errorf("read files at %q: not a full commit hash", commit)
	}
	return g.blobsAt(ctx, commit, paths)
}

// BlobsAtRef is BlobsAt at the commit a ref names as git reads it, in the
// same git process: one, where resolving the ref first was another.
func (g Repo) BlobsAtRef(ctx context.Context, ref string, paths []string) (map[string]Blob, error) {
	if err := checkRef(ref); err != nil {
		return nil, fmt.Errorf("read files: %w", err)
	}
	return g.blobsAt(ctx, ref+"^{commit}", paths)
}

// checkRef refuses what git would take for an option or a path inside a
// revision rather than a ref.
func checkRef(ref string) error {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\n:") {
		return fmt.Errorf("%q is not a ref", ref)
	}
	return nil
}

// EntryKind is what a path is in a commit's tree.
type EntryKind int

const (
	NoEntry     EntryKind = iota
	RegularFile           // executable or not
	Folder
	LinkOrSubmodule // what a reader of plain files must not follow
)

// KindAtRef tells what path (a slash path from the top) is at the commit
// ref names, read from the trees in one git process.
func (g Repo) KindAtRef(ctx context.Context, ref, path string) (EntryKind, error) {
	if err := checkRef(ref); err != nil {
		return NoEntry, fmt.Errorf("read %s: %w", path, err)
	}
	c, err := g.catFile(ctx)
	if err != nil {
		return NoEntry, err
	}
	defer c.close()
	entries, err := c.entriesAt(g, ref+"^{commit}", []string{path})
	if err != nil {
		return NoEntry, err
	}
	e, ok := entries[path]
	switch {
	case !ok:
		return NoEntry, nil
	case e.regular():
		return RegularFile, nil
	case e.mode == "40000":
		return Folder, nil
	}
	return LinkOrSubmodule, nil
}

func (g Repo) blobsAt(ctx context.Context, commit string, paths []string) (map[string]Blob, error) {
	c, err := g.catFile(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	entries, err := c.entriesAt(g, commit, paths)
	if err != nil {
		return nil, err
	}
	var ids, names []string
	for _, p := range paths {
		if e, ok := entries[p]; ok && e.regular() && !slices.Contains(names, p) {
			ids, names = append(ids, e.id), append(names, p)
		}
	}
	blobs, err := c.objects(ids, "blob")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Blob, len(names))
	for i, n := range names {
		out[n] = Blob{Data: blobs[i], Exec: entries[n].mode == "100755"}
	}
	return out, nil
}

// entriesAt is the tree entry of each of paths (slash paths from the
// top) at commit — a full hash, or a revision git resolves to a commit
// (then the commit's own hash is not checked) — by path; a path not there
// is left out. The paths' folders are read level by level, each level's
// trees in one batch, however many paths.
func (c *catFile) entriesAt(g Repo, commit string, paths []string) (map[string]treeEntry, error) {
	if !fullHash(commit) {
		answers, err := c.batch([]string{commit})
		if err != nil {
			return nil, err
		}
		if answers[0].missing || answers[0].typ != "commit" {
			return nil, fmt.Errorf("%s is not a commit of the repository in %s", strings.TrimSuffix(commit, "^{commit}"), g.Dir)
		}
		commit = answers[0].id
	}
	raw, err := c.object(commit, "commit")
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	root, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || len(root) != len(commit) {
		return nil, fmt.Errorf("commit %s: no tree line", commit)
	}
	type walk struct {
		path  string
		parts []string
		tree  string
	}
	var pending []walk
	for _, p := range paths {
		pending = append(pending, walk{p, strings.Split(strings.Trim(p, "/"), "/"), string(root)})
	}
	trees := map[string][]treeEntry{} // by tree id
	out := map[string]treeEntry{}
	for len(pending) > 0 {
		var need []string
		for _, w := range pending {
			if _, ok := trees[w.tree]; !ok && !slices.Contains(need, w.tree) {
				need = append(need, w.tree)
			}
		}
		raws, err := c.objects(need, "tree")
		if err != nil {
			return nil, err
		}
		for i, id := range need {
			if trees[id], err = parseTree(id, raws[i]); err != nil {
				return nil, err
			}
		}
		next := pending[:0]
		for _, w := range pending {
			for _, e := range trees[w.tree] {
				if e.name != w.parts[0] {
					continue
				}
				switch {
				case len(w.parts) == 1:
					out[w.path] = e
				case e.mode == "40000":
					next = append(next, walk{w.path, w.parts[1:], e.id})
				}
				break
			}
		}
		pending = next
	}
	return out, nil
}

// RevDir names a folder (a slash path from the repository's top) at a
// revision, for FilesAtRevs.
type RevDir struct{ Rev, Dir string }

// FilesAtRevs returns, for each of dirs, the regular files directly in it
// as committed at its revision, by name; a folder or revision that is not
// there gives nil. One `git cat-file --batch` however many folders: a
// reader of many story branches (status, the epic runner) costs one git
// process, not one per file. Every object is checked against the name
// git gave it; unlike FilesAt, a revision may be a ref, whose commit is
// not checked (a read for display, never for what counts).
func (g Repo) FilesAtRevs(ctx context.Context, dirs []RevDir) ([]map[string][]byte, error) {
	out := make([]map[string][]byte, len(dirs))
	if len(dirs) == 0 {
		return out, nil
	}
	var names []string
	for _, d := range dirs {
		names = append(names, d.Rev+":"+strings.Trim(d.Dir, "/"))
	}
	c, err := g.catFile(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	trees, err := c.batch(names)
	if err != nil {
		return nil, err
	}
	type file struct {
		dir  int
		name string
	}
	var ids []string
	var files []file
	for i, t := range trees {
		if t.missing || t.typ != "tree" {
			continue
		}
		entries, err := parseTree(t.id, t.content)
		if err != nil {
			return nil, err
		}
		out[i] = map[string][]byte{}
		for _, e := range entries {
			if e.regular() {
				ids, files = append(ids, e.id), append(files, file{i, e.name})
			}
		}
	}
	blobs, err := c.objects(ids, "blob")
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		out[f.dir][f.name] = blobs[i]
	}
	return out, nil
}

// CommitsNotIn returns the commits reachable from tips but not from into,
// each with its parents (one `git rev-list --parents`): the part of the
// history that ancestry questions about unmerged branches need. A tip
// reachable from into is not in it. The tips go on stdin: given as
// arguments, git looks for a ref named like each hexadecimal name (to warn
// of an ambiguity), a dozen failed stats a tip — at 200 story branches
// 2,400 of the process's 2,860 system calls and a quarter of its time
// (docs/architecture.md#an-epic-of-200-stories); --stdin reads them as git's
// batch modes do, without that lookup.
func (g Repo) CommitsNotIn(ctx context.Context, tips []string, into string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(tips) == 0 {
		return out, nil
	}
	var revs strings.Builder
	for _, t := range tips {
		if strings.ContainsAny(t, "\n\x00") || strings.HasPrefix(t, "-") {
			return nil, fmt.Errorf("git rev-list: %q is not a revision", t)
		}
		revs.WriteString(t + "\n")
	}
	text, err := g.RawInput(ctx, []byte(revs.String()), "rev-list", "--parents", "--stdin", "--not", into, "--")
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) > 0 {
			out[f[0]] = f[1:]
		}
	}
	return out, nil
}
