//go:build unix

package git

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// CommittedAsIs answers from the branch's trees and the files: a file as
// committed (content and executable bit) and a path neither has are as
// is; anything else — changed bytes, a flipped bit, a link, a FIFO (never
// waited on), a file not committed, a folder — is left to git. In SHA-1
// and SHA-256 repositories.
func TestCommittedAsIs(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			root := t.TempDir()
			testkit.Git(t, root, "init", "-q", "--object-format="+format)
			testkit.WriteFiles(t, root, map[string]string{
				"same.txt": "kept\n", "changed.txt": "before\n", "run.sh": "#!/bin/sh\n", "flipped.sh": "#!/bin/sh\n",
				"deep/er/same.go": "package er\n", "linked.txt": "a file\n", "fifo.txt": "a file\n", "gone.txt": "removed\n",
			})
			for _, f := range []string{"run.sh", "flipped.sh"} {
				if err := os.Chmod(filepath.Join(root, f), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			testkit.Git(t, root, "add", "-A")
			testkit.Git(t, root, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "files")
			testkit.Git(t, root, "branch", "story/x")
			// What the working files are after the commit.
			testkit.WriteFiles(t, root, map[string]string{"changed.txt": "after\n", "new.txt": "not committed\n"})
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.Chmod(filepath.Join(root, "flipped.sh"), 0o644))
			must(os.Remove(filepath.Join(root, "linked.txt")))
			must(os.Symlink(filepath.Join(root, "same.txt"), filepath.Join(root, "linked.txt")))
			must(os.Remove(filepath.Join(root, "fifo.txt")))
			must(syscall.Mkfifo(filepath.Join(root, "fifo.txt"), 0o644))
			must(os.Remove(filepath.Join(root, "gone.txt")))

			wt, err := filesafe.OpenBeneath(root)
			must(err)
			defer wt.Close()
			paths := []string{"same.txt", "changed.txt", "run.sh", "flipped.sh", "deep/er/same.go", "linked.txt",
				"fifo.txt", "gone.txt", "never.txt", "new.txt", "deep/"}
			asIs, err := Repo{Dir: root}.CommittedAsIs(context.Background(), "refs/heads/story/x", wt, paths)
			must(err)
			got := slices.Sorted(maps.Keys(asIs))
			// gone.txt is committed and deleted: git is asked (a deletion
			// not committed).
			want := []string{"deep/er/same.go", "never.txt", "run.sh", "same.txt"}
			if !slices.Equal(got, want) {
				t.Errorf("as committed: %q, want %q", got, want)
			}
			if _, err := (Repo{Dir: root}).CommittedAsIs(context.Background(), "--output=x", wt, paths); err == nil {
				t.Error("an option-like ref was taken")
			}
		})
	}
}
