package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/scaffold"
	"github.com/saga-ai/saga-lsp/store"
)

// restackConflict is what a restack that conflicted hands its story's next
// run (docs/restack.md#a-conflict).
type restackConflict struct {
	Story string
	Head  string   // the story branch's tip, left as it was
	Onto  []string // the branches it was to be rebuilt on
	Tips  []string // their tips
	Files []string // where it conflicted
}

// ConflictMarkersCheck is the restack task's check: no file of the
// repository outside .saga/ (and the folders of dependencies) has a line
// starting a conflict's side. It names no file, so it protects none
// (verify's rule: a file a check names is protected).
const ConflictMarkersCheck = `! grep -rnI --exclude-dir=.git --exclude-dir=.saga --exclude-dir=node_modules -e '^<<<<<<< ' -e '^>>>>>>> ' .`

// restackTaskID is the conflict task's id: one per story tip and new base
// tips, so that a second restack of the same two tips rewrites the same
// task.
func restackTaskID(c restackConflict) string {
	sum := sha256.Sum256([]byte(c.Head + " " + strings.Join(c.Tips, " ")))
	return "restack-" + hex.EncodeToString(sum[:])[:10]
}

// writeRestackTask writes the conflict-resolution task into the story's
// folder in dir (the story's worktree) as runs/review's Apply writes a
// review task: saga-lsp's encoding of store.TaskDoc, validated as the
// file's own rules say, written atomically under the story's lock, never
// through a link out of dir. It returns the file (relative to dir) and its
// content's SHA-256, by which the worker tells it from an agent's edit.
func writeRestackTask(ctx context.Context, p *store.Parser, dir string, c restackConflict) (rel, digest string, err error) {
	if !store.ValidCanonical(c.Story) {
		return "", "", fmt.Errorf("invalid story name %q", c.Story)
	}
	lock, err := filesafe.AcquireLock(ctx, dir, store.StoryLockName(c.Story))
	if err != nil {
		return "", "", fmt.Errorf("the restack task of %s: %w", c.Story, err)
	}
	defer func() { _ = lock.Unlock() }()
	b, err := filesafe.OpenBeneath(dir)
	if err != nil {
		return "", "", fmt.Errorf("the restack task of %s: %w", c.Story, err)
	}
	defer b.Close()
	id := restackTaskID(c)
	rel = store.TaskFileRel(c.Story, id)
	onto := make([]string, len(c.Onto))
	for i := range c.Onto {
		onto[i] = fmt.Sprintf("%s (now at %s)", c.Onto[i], verify.Short(c.Tips[i]))
	}
	files := termtext.Escapes(c.Files) // git's names, as the repository has them
	desc := fmt.Sprintf("This story's branch %s (at %s) is stacked on %s, which moved after this story was done (a review round pushed to it). "+
		"saga-lsp could not rebuild the story's own commits on the new tip: they conflict in %s.\n\n"+
		"Before this run the worker merged the new tip into the branch and committed the merge with the conflicts as git left them, so those files hold conflict markers. "+
		"Resolve every conflict so that the story keeps doing what its tasks ask on top of the blocker's new work: keep both sides' intent, remove every marker, and make the story's checks pass again. "+
		"This task's check fails while a file of the repository still has a conflict marker.",
		"story/"+c.Story, verify.Short(c.Head), strings.Join(onto, " and "), strings.Join(files, ", "))
	doc := store.TaskDoc{ID: id, Subject: "Resolve the conflicts with the new tip of " + strings.Join(c.Onto, " and "),
		Description: desc, Status: store.StatusPending, BlockedBy: []string{},
		DoneWhen: "no file of the repository has a conflict marker, and every task's checks pass on the merged tree",
		Checks:   []string{ConflictMarkersCheck}}
	data, err := store.MarshalIndent(doc)
	if err != nil {
		return "", "", fmt.Errorf("encode %s: %w", rel, err)
	}
	if err := scaffold.Validate(p, rel, data); err != nil {
		return "", "", err
	}
	if err := b.WriteFileAtomic(rel, data, 0o644); err != nil {
		return "", "", fmt.Errorf("write %s: %w", rel, err)
	}
	sum := sha256.Sum256(data)
	return rel, hex.EncodeToString(sum[:]), nil
}
