package github

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// Installed reports what Install or Remove did.
type Installed struct {
	Path    string // the workflow file
	Content []byte // what Install wrote (or found up to date)
	Created bool   // the file did not exist
	Written bool   // the file was written
	Removed bool   // the file was removed
}

// EditedError refuses to replace or remove a workflow that was edited
// since saga-lsp wrote it (or that saga-lsp did not write); the file is
// left as it is.
type EditedError struct {
	Path   string
	Remove bool
	Diff   []byte // from the file to what saga-lsp would write now
}

func (e *EditedError) Error() string {
	what, flags := "replace", "--github-actions --force"
	if e.Remove {
		what, flags = "remove", "--github-actions --remove --force"
	}
	return fmt.Sprintf("%s was edited since saga-lsp wrote it (or saga-lsp did not write it), so it was left as it is: "+
		"keep your changes, or run `saga-lsp install %s` to %s it (the differences from what saga-lsp would write now follow)",
		e.Path, flags, what)
}

// FromSourceError refuses --from-source outside saga-lsp's own repository:
// there is no saga-lsp to build from the checked-out commit.
type FromSourceError struct{ GoMod, Found string }

func (e *FromSourceError) Error() string {
	found := "it does not exist"
	if e.Found != "" {
		found = "it declares module " + e.Found
	}
	return fmt.Sprintf("--from-source builds saga-lsp on the runner from the checked-out commit, so %s must declare module %s, but %s: "+
		"install a release of saga-lsp and leave out --from-source", e.GoMod, Module, found)
}

// CheckFromSource tells whether the repository at root is saga-lsp's own,
// which --from-source builds.
func CheckFromSource(root string) error {
	path := filepath.Join(root, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	found := ""
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			found = strings.Trim(strings.TrimSpace(rest), `"`)
			break
		}
	}
	if found != Module {
		return &FromSourceError{GoMod: path, Found: found}
	}
	return nil
}

// Install writes the workflow for src into the repository whose top is
// root: created, replaced when saga-lsp wrote it and no one edited it, or
// with force; an edited one is refused with an *EditedError.
func Install(root string, src Source, force bool) (Installed, error) {
	res := Installed{Path: filepath.Join(root, filepath.FromSlash(WorkflowPath))}
	if src.FromSource {
		if err := CheckFromSource(root); err != nil {
			return res, err
		}
	}
	content, err := Render(src)
	if err != nil {
		return res, err
	}
	res.Content = content
	old, err := os.ReadFile(res.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return res, err
	case bytes.Equal(old, content):
		return res, nil
	case !Pristine(old) && !force:
		return res, &EditedError{Path: res.Path, Diff: diff.Diff(WorkflowPath+" (yours)", old, WorkflowPath+" (saga-lsp's)", content)}
	}
	// Below the repository's top: a .github a clone brought as a link out
	// of it is never written through (docs/security.md#writes-that-never-follow-a-link-out).
	if err := filesafe.WriteFileBeneath(root, WorkflowPath, content, 0o644); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// Remove deletes the workflow from the repository whose top is root when
// saga-lsp wrote it and no one edited it, or with force; an edited one is
// refused with an *EditedError (diffed against src's rendering). No file
// is no error.
func Remove(root string, src Source, force bool) (Installed, error) {
	res := Installed{Path: filepath.Join(root, filepath.FromSlash(WorkflowPath))}
	old, err := os.ReadFile(res.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	} else if err != nil {
		return res, err
	}
	if !Pristine(old) && !force {
		e := &EditedError{Path: res.Path, Remove: true}
		if content, err := Render(src); err == nil {
			e.Diff = diff.Diff(WorkflowPath+" (yours)", old, WorkflowPath+" (saga-lsp's)", content)
		}
		return res, e
	}
	b, err := filesafe.OpenBeneath(root)
	if err != nil {
		return res, err
	}
	defer b.Close()
	if err := b.Remove(WorkflowPath); err != nil {
		return res, err
	}
	res.Removed = true
	return res, nil
}
