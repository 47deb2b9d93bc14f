//go:build unix

package github_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/runs/github"
)

// A repository can bring .github as a link (git carries links): `install
// --github-actions` never writes or removes the workflow through one that
// leads out of the repository (absolute, relative, a link to a link).
func TestInstallNeverFollowsALinkOut(t *testing.T) {
	src := github.Source{Version: "v1.4.2", GoVersion: "1.26"}
	for _, how := range []string{"absolute", "relative", "link to a link"} {
		t.Run(how, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			target := outside
			switch how {
			case "relative":
				target, _ = filepath.Rel(root, outside)
			case "link to a link":
				os.Symlink(outside, filepath.Join(root, "hop"))
				target = "hop"
			}
			if err := os.Symlink(target, filepath.Join(root, ".github")); err != nil {
				t.Fatal(err)
			}
			if _, err := github.Install(root, src, false); err == nil {
				t.Error("Install wrote through the link")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("Install wrote outside the repository: %v", entries)
			}
			// A pristine workflow there is not removed through the link.
			other := t.TempDir()
			if _, err := github.Install(other, src, false); err != nil {
				t.Fatal(err)
			}
			os.Rename(filepath.Join(other, ".github", "workflows"), filepath.Join(outside, "workflows"))
			if _, err := github.Remove(root, src, false); err == nil {
				t.Error("Remove removed through the link")
			}
			if _, err := os.Stat(filepath.Join(outside, "workflows", "saga-story.yml")); err != nil {
				t.Fatalf("the workflow outside was removed: %v", err)
			}
		})
	}
}
