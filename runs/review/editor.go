package review

// A review without GitHub (docs/review.md#a-review-without-github): a
// comment made in the editor's review of a story — a line of a file in
// its diff — becomes a review task like a thread's, through Apply.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// EditorComment is one comment on a line of a story's review diff.
type EditorComment struct {
	Story string
	Path  string // the file, relative to the repository, slash-separated
	Line  int    // 1-based; 0 for the file as a whole
	Body  string
	// Author is who wrote it (the editor's user): the person reviewing,
	// who can write to their own checkout.
	Author string
}

// EditorKey is the comment's key: a hash of where it is and what it says,
// so that the same comment sent twice is one task.
func EditorKey(c EditorComment) string {
	sum := sha256.Sum256([]byte(c.Story + "\x00" + c.Path + "\x00" + fmt.Sprint(c.Line) + "\x00" + strings.TrimSpace(c.Body)))
	return "editor-" + hex.EncodeToString(sum[:])[:20]
}

// EditorRoot is where a story's editor comments are written: its worktree
// while it has one (where its next round works), else the checkout.
func EditorRoot(checkout, story string) string {
	wt := store.WorktreeDir(checkout, story)
	if fi, err := os.Stat(filepath.Join(wt, filepath.FromSlash(store.StoryDirRel(story)))); err == nil && fi.IsDir() {
		return wt
	}
	return checkout
}

// EditorResult is what FromEditor did.
type EditorResult struct {
	Task    string `json:"task"`    // the review task's id
	File    string `json:"file"`    // its file, relative to Root
	Root    string `json:"root"`    // where it was written (EditorRoot)
	Created bool   `json:"created"` // false: the same comment was already a task
}

// FromEditor writes the comment as a review task of kind "editor" into the
// story's folder under EditorRoot(checkout, story), through Apply: validated,
// atomic, under the story's lock. The same comment again (EditorKey) is the
// same task, left as it is; the story's other review tasks are untouched.
func FromEditor(ctx context.Context, p *store.Parser, checkout string, c EditorComment, now time.Time) (EditorResult, error) {
	c.Body = strings.TrimSpace(c.Body)
	c.Author = strings.TrimSpace(c.Author)
	switch {
	case !store.ValidCanonical(c.Story):
		return EditorResult{}, store.Usagef("invalid story name %q", c.Story)
	case c.Body == "":
		return EditorResult{}, store.Usagef("an empty comment asks for nothing")
	case c.Line < 0:
		return EditorResult{}, store.Usagef("line %d: lines start at 1", c.Line)
	}
	if c.Path != "" {
		clean := path.Clean(filepath.ToSlash(c.Path))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || filepath.IsAbs(c.Path) {
			return EditorResult{}, store.Usagef("path %q: name a file of the repository, relative to it", c.Path)
		}
		c.Path = clean
	}
	if c.Author == "" {
		c.Author = "you"
	}
	root := EditorRoot(checkout, c.Story)
	st, err := p.LoadStory(root, c.Story)
	if err != nil {
		return EditorResult{}, store.Usagef("%v", err)
	}
	key := EditorKey(c)
	req := Request{Key: key, Kind: KindEditor, Path: c.Path, Line: c.Line, UpdatedAt: now.UTC().Truncate(time.Second)}
	// Every review task stays open: an editor comment cancels nothing.
	open := map[string]bool{key: true}
	existed := false
	for _, t := range st.Tasks {
		if t.Review == nil {
			continue
		}
		open[t.Review.Key] = true
		if t.Review.Key == key {
			existed = true
			if at, err := time.Parse(time.RFC3339, t.Review.UpdatedAt); err == nil {
				req.UpdatedAt = at // not newer: Apply leaves it
			}
		}
	}
	req.Quotes = []Quote{{Author: c.Author, Body: c.Body, UpdatedAt: req.UpdatedAt}}
	id := TaskID(key)
	res := EditorResult{Task: id, File: store.TaskFileRel(c.Story, id), Root: root}
	ch, err := Apply(ctx, p, root, c.Story, st.Tasks, Round{Requests: []Request{req}, Open: open})
	if err != nil {
		return res, err
	}
	res.Created = !existed && len(ch.Created) == 1
	return res, nil
}
