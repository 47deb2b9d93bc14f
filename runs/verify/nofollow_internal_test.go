//go:build unix

package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
)

// Issue 32: the protected run's mirror holds the story's links as links;
// restoring R's version of a protected file whose folder the story made a
// link out of the worktree (absolute, relative, a link to a link) writes
// nothing there — the view is refused, so the check cannot pass — for the
// mirror of a folder (under bubblewrap) and of the whole tree (unconfined).
func TestViewNeverRestoresThroughALinkOut(t *testing.T) {
	for _, how := range []string{"absolute", "relative", "link to a link"} {
		for _, whole := range []bool{false, true} {
			t.Run(how+map[bool]string{false: "", true: " whole"}[whole], func(t *testing.T) {
				wt, outside := t.TempDir(), t.TempDir()
				os.MkdirAll(filepath.Join(wt, ".git"), 0o755)
				os.MkdirAll(filepath.Join(wt, "pkg"), 0o755)
				os.WriteFile(filepath.Join(wt, "pkg", "a.go"), []byte("package pkg\n"), 0o644)
				target := outside
				switch how {
				case "relative":
					target, _ = filepath.Rel(filepath.Join(wt, "pkg"), outside)
				case "link to a link":
					os.Symlink(outside, filepath.Join(wt, "pkg", "hop"))
					target = "hop"
				}
				if err := os.Symlink(target, filepath.Join(wt, "pkg", "sub")); err != nil {
					t.Fatal(err)
				}
				v := View{Dir: wt, Restore: map[string]git.Blob{"pkg/sub/x_test.go": {Data: []byte("R's test\n")}}}
				m, err := v.mount(whole)
				if m != nil {
					defer m.remove()
				}
				var written []string
				filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
					if p != outside {
						written = append(written, p)
					}
					return nil
				})
				if len(written) > 0 {
					t.Fatalf("the view wrote outside the worktree (err %v): %v", err, written)
				}
				if err == nil || !strings.Contains(err.Error(), "protected view") {
					t.Fatalf("mount = %v, want the view refused", err)
				}
			})
		}
	}
}
