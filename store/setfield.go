package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// The one validated way to change a field of a story's files in place: the
// hook's status sync, the worker's status and story-field writes and its
// reconciliation all go through here, so they share every check.

// ErrNoFile is returned by SetTaskStatus when the task has no file in
// the story (a task created at run time with TaskCreate): nothing to write.
var ErrNoFile = errors.New("no such file in the story")

// StoryLockName is the lock every writer of a story's files holds while it
// reads, modifies and writes one (shared by every worktree of the
// repository).
func StoryLockName(story string) string { return "story-" + story }

// SetTaskStatus sets the status of task in story to status in
// <root>/.saga/stories/<story>/<task>.json: only the status value's bytes
// change (a missing status member is appended), written atomically while
// holding the story's lock. changed is false when the file already had that
// status. A task without a file gives ErrNoFile. Names are validated
// before any path is built; the file must be a regular file whose real path
// is inside the story's own folder (a symlinked story folder cannot redirect
// the write to another story), and the result must still parse.
func SetTaskStatus(ctx context.Context, root, story, task, status string) (changed bool, err error) {
	return setTaskStatus(ctx, root, story, task, status, true)
}

// MirrorTaskStatus is SetTaskStatus for a status whose source of truth is
// elsewhere — the hook's copy of what a TaskUpdate set in Claude Code's task
// list: the same checks, lock, no-follow write and atomic rename, without
// the two fsyncs (docs/hooks.md#the-hook-program). Readers see the old file
// or the new one, never a mix; a crash may lose the change (as it may lose
// the task list's own, which Claude Code writes without fsync), and the
// worker's reconciliation from the task list writes it again.
func MirrorTaskStatus(ctx context.Context, root, story, task, status string) (changed bool, err error) {
	return setTaskStatus(ctx, root, story, task, status, false)
}

func setTaskStatus(ctx context.Context, root, story, task, status string, durable bool) (changed bool, err error) {
	if !ValidID(task) {
		return false, fmt.Errorf("invalid task id %q", task)
	}
	switch status {
	case StatusPending, StatusInProgress, StatusCompleted:
	default:
		return false, fmt.Errorf("invalid status %q: want pending, in_progress or completed", status)
	}
	return setMember(ctx, root, story, TaskFileRel(story, task), "status", status, true, durable)
}

// SetStoryField sets a string member of a story's story.json the same way.
// With onlyIfPresent, a member the file does not have is left out (upstream
// SAGA's strict story object rejects a status it did not write).
func SetStoryField(ctx context.Context, root, story, key, value string, onlyIfPresent bool) (changed bool, err error) {
	return setMember(ctx, root, story, StoryFileRel(story), key, value, !onlyIfPresent, true)
}

func setMember(ctx context.Context, root, story, rel, key, value string, add, durable bool) (changed bool, err error) {
	if !ValidCanonical(story) {
		return false, fmt.Errorf("invalid story name %q", story)
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := checkStoryTarget(root, story, path, rel); err != nil {
		return false, err
	}
	lock, err := filesafe.AcquireLock(ctx, root, StoryLockName(story))
	if err != nil {
		return false, fmt.Errorf("lock story %s: %w", story, err)
	}
	defer func() {
		if uerr := lock.Unlock(); err == nil && uerr != nil {
			err = uerr
		}
	}()
	// Below the root, never through a link out of it (a worktree's .saga is
	// its agent's to shape): docs/security.md#writes-that-never-follow-a-link-out.
	b, err := filesafe.OpenBeneath(root)
	if err != nil {
		return false, err
	}
	defer b.Close()
	b.NoSync = !durable
	err = b.UpdateFile(rel, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, ErrNoFile // removed while we waited
		}
		if len(old) > filesafe.MaxFileSize {
			return nil, fmt.Errorf("%s is over the %d MB limit for SAGA files", rel, filesafe.MaxFileSize>>20)
		}
		if !add {
			if doc := jsonc.Parse(old); doc.Root == nil || doc.Root.Kind != jsonc.Object || doc.Root.Member(key) == nil {
				return old, nil
			}
		}
		out, err := SetString(old, key, value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		if doc := jsonc.Parse(out); len(doc.Errors) > 0 {
			return nil, fmt.Errorf("%s: setting %s would break the file (%s); left as it was", rel, key, doc.Errors[0].Message)
		}
		changed = !bytes.Equal(out, old)
		return out, nil
	})
	return changed, err
}

// checkStoryTarget: the file must be a regular file (a write would replace
// a link with a copy) inside the story's real folder; a missing file is
// ErrNoFile, a missing story folder an error.
func checkStoryTarget(root, story, path, rel string) error {
	dir := filepath.Join(root, filepath.FromSlash(StoryDirRel(story)))
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, derr := os.Stat(dir); derr != nil {
			return fmt.Errorf("no story folder %s in %s", StoryDirRel(story), root)
		}
		return ErrNoFile
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file; SAGA task files are plain JSON files", rel)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	realStories, err := filepath.EvalSymlinks(filepath.Join(root, ".saga", "stories"))
	if err != nil {
		return err
	}
	if realDir != filepath.Join(realStories, story) {
		return fmt.Errorf("%s is a link to %s, outside story %s's own folder; refusing to write through it", StoryDirRel(story), realDir, story)
	}
	return nil
}

// RunFields are the members of a story's file (rel) that runs write or
// wrote — a task's status; story.json's status, and the branch, worktree
// and pr workers before issue 23 kept there (now in the run record).
// Everything else is the story's definition, which a person changes on
// the base.
func RunFields(rel string) []string {
	if path.Base(rel) == "story.json" {
		return []string{"branch", "worktree", "pr", "status"}
	}
	return []string{"status"}
}

// SameDefinition tells whether two versions of a story's file (rel) hold
// the same definition: they differ in RunFields at most. Versions that are
// not both JSON objects are the same only byte for byte.
func SameDefinition(rel string, a, b []byte) bool {
	var av, bv map[string]any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return bytes.Equal(a, b)
	}
	for _, k := range RunFields(rel) {
		delete(av, k)
		delete(bv, k)
	}
	return reflect.DeepEqual(av, bv)
}
