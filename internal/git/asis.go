package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// asIsFileMax and asIsTotalMax bound what CommittedAsIs reads of the
// working files: beyond them a path is left to git.
const (
	asIsFileMax  = 8 << 20
	asIsTotalMax = 64 << 20
)

// CommittedAsIs tells which of paths (slash paths from the top) hold in
// the worktree wt exactly what the commit the branch ref names holds: a
// regular file whose bytes are the committed blob's, its executable bit
// the same, or a path neither has. It answers from the commit's trees
// (one cat-file process) and the files themselves, where `git diff` of the
// paths reads the whole index first (0.1 s of a core at 100,000 files:
// docs/architecture.md#cost-follows-the-change-100000-files). What it
// cannot tell so — a link, a submodule, a folder, a file a filter of the
// repository would convert, a file too large — is not in the answer: git
// judges those. The files are read below wt without following a link out
// of it, and a FIFO is never waited on.
func (g Repo) CommittedAsIs(ctx context.Context, ref string, wt *filesafe.Beneath, paths []string) (map[string]bool, error) {
	if err := checkRef(ref); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	c, err := g.catFile(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	entries, err := c.entriesAt(g, ref+"^{commit}", paths)
	if err != nil {
		return nil, err
	}
	asIs := map[string]bool{}
	var read int64
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			continue
		}
		e, committed := entries[p]
		fi, err := wt.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !committed {
				asIs[p] = true
			}
			continue
		case err != nil || !committed:
			continue
		}
		exec := e.mode == "100755"
		if !e.regular() || !fi.Mode().IsRegular() || (fi.Mode()&0o100 != 0) != exec ||
			fi.Size() > asIsFileMax || read+fi.Size() > asIsTotalMax {
			continue
		}
		data, err := wt.ReadFile(p, asIsFileMax)
		if err != nil {
			continue
		}
		read += int64(len(data))
		if objectHash("blob", data, len(e.id)) == e.id {
			asIs[p] = true
		}
	}
	return asIs, nil
}
