package filesafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A symbolic link in .saga/ (a story folder, an epic, a task file, the
// stories folder itself) is followed only when what it leads to lies inside
// the workspace: a repository that links .saga/stories/x to / or to a
// home folder must not have the loader, `check` or the language server
// parse JSON from there. A link that stays inside the workspace is followed
// as before (a story kept elsewhere in the repository).

// Confiner tells whether a real path lies inside the workspace: the real
// path of its root, resolved once.
type Confiner struct {
	root string // the real path of the workspace root
	lex  string // the root as given, made absolute
}

func NewConfiner(root string) Confiner {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	c := Confiner{root: filepath.Clean(abs), lex: abs}
	if real, err := realPath(abs); err == nil {
		c.root = real
	}
	return c
}

// Root is the real path of the workspace root.
func (c Confiner) Root() string { return c.root }

// inside: real is the root or below it.
func (c Confiner) inside(real string) bool {
	return real == c.root || strings.HasPrefix(real, strings.TrimSuffix(c.root, string(filepath.Separator))+string(filepath.Separator))
}

// errOutside is a link (somewhere along a path) leading out of the
// workspace, to target.
type errOutside struct{ target string }

func (e *errOutside) Error() string { return "leads outside the workspace, to " + e.target }

// OutsideProblem is the diagnostic of rel leading out of the workspace.
func OutsideProblem(rel, target string) string {
	return fmt.Sprintf("%s is a symbolic link to %s, outside the workspace; saga-lsp never reads through it: put the folder or file itself inside the workspace (or remove the link)", rel, target)
}

// CheckPath refuses a path (abs, relative to the root rel) that resolves
// outside the workspace; "" when it is inside, or missing (nothing is read
// through a missing path). Used where a folder is listed by path; what is
// opened is checked again by its descriptor (CheckFd).
func (c Confiner) CheckPath(path, rel string) string {
	real, err := realPath(path)
	if err != nil || c.inside(real) {
		return ""
	}
	return OutsideProblem(rel, real)
}

// CheckBelow is CheckPath of base/sub (sub slash-separated, no dot
// names) where base was checked and is inside: while sub's components are
// no links, the path stays where base resolves — one lstat each, where
// CheckPath resolves every component from the root of the file system
// (a load checks each of an epic's 200 worktrees' story folders). A link
// among them is resolved as CheckPath does.
func (c Confiner) CheckBelow(base, sub, rel string) string {
	p := base
	for name := range strings.SplitSeq(sub, "/") {
		p = filepath.Join(p, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return "" // missing: nothing is read through it
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return c.CheckPath(filepath.Join(base, filepath.FromSlash(sub)), rel)
		}
	}
	return ""
}

// realPath is path with every link resolved, made absolute.
func realPath(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// ReadWorkspaceFile is ReadBounded of the file rel of the workspace at root
// that also refuses a file reached through a symbolic link leading out of
// the workspace (the language server's reads of what changed on disk).
func ReadWorkspaceFile(root, rel string) (src []byte, why string) {
	c := NewConfiner(root)
	abs := filepath.Join(root, filepath.FromSlash(rel))
	src, _, why = ReadBoundedAt(CWD, abs, rel, func(n int) []byte { return make([]byte, 0, n) }, &c)
	return src, why
}

// OutsideWorkspace says why the folder or file rel of the workspace at root
// is not read: it resolves, through a symbolic link, outside the workspace;
// "" when it does not (or does not exist).
func OutsideWorkspace(root, rel string) string {
	return NewConfiner(root).CheckPath(filepath.Join(root, filepath.FromSlash(rel)), rel)
}

// IsOutside: err is a refusal of a link out of the workspace; target is
// where it leads.
func IsOutside(err error) (target string, ok bool) {
	if err == nil {
		return "", false // before the pointer below escapes: once per story folder
	}
	var o *errOutside
	if errors.As(err, &o) {
		return o.target, true
	}
	return "", false
}
