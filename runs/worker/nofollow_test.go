//go:build unix

package worker_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
)

// Issue 32, attack 1, end to end: the agent's sandboxed Bash replaces the
// folders of its own npm cache (_cacache/content-v2 and index-v5) with
// links to a folder outside; the story's next worker start seeds that
// cache as the user, outside any sandbox — and writes nothing there: the
// seed stops, and the log says why and what to do.
func TestNpmSeedNeverFollowsTheAgentsLinks(t *testing.T) {
	sandboxed(t)
	f := newFixture(t, false)
	// The user's npm cache, holding the tarball the story's lockfile names.
	warm := filepath.Join(t.TempDir(), "npm")
	t.Setenv("npm_config_cache", warm)
	body := "the user's left-pad tarball"
	sum := sha512.Sum512([]byte(body))
	h := hex.EncodeToString(sum[:])
	key := "make-fetch-happen:request-cache:https://registry.example/left-pad/-/left-pad-1.0.0.tgz"
	k := sha256.Sum256([]byte(key))
	kh := hex.EncodeToString(k[:])
	testkit.WriteFiles(t, warm, map[string]string{
		"_cacache/content-v2/sha512/" + h[:2] + "/" + h[2:4] + "/" + h[4:]: body,
		"_cacache/index-v5/" + kh[:2] + "/" + kh[2:4] + "/" + kh[4:]: fmt.Sprintf("\nx\t{\"key\":%q,\"integrity\":%q}",
			key, "sha512-"+base64.StdEncoding.EncodeToString(sum[:])),
	})
	testkit.WriteFiles(t, f.root, map[string]string{
		"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/left-pad": {}}}` + "\n",
	})
	outside := t.TempDir() // the folder the story chose
	plant := `c="$npm_config_cache/_cacache" && ls "$c/content-v2/sha512" && rm -rf "$c/content-v2" "$c/index-v5" && ln -s ` + outside + ` "$c/content-v2" && ln -s ` + outside + ` "$c/index-v5" && echo planted`
	f.addProbeStory("npmlink", plant+" > plant.txt 2>&1") // commits the lockfile too

	// The first run: seeded, then the agent plants its links.
	code, out := f.run("npmlink", "idle", nil)
	wt := filepath.Join(f.root, ".saga", "worktrees", "npmlink")
	if report := testkit.FileText(filepath.Join(wt, "plant.txt")); !strings.Contains(report, "planted") {
		t.Fatalf("the agent did not plant its links (exit %d):\n%s\n%s", code, report, out)
	}
	agent, _ := buildcache.CachePath(f.root, "npmlink", nil)
	if fi, err := os.Lstat(filepath.Join(agent, "npm", "_cacache", "content-v2")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("no link in the agent's cache: %v %v", fi, err)
	}
	// The next start seeds the agent's cache again, as the user.
	code, out = f.run("npmlink", "all", nil)
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Fatalf("the seed wrote into the folder the story chose (exit %d): %v\n%s", code, entries, out)
	}
	if !strings.Contains(out, "not seeding the story's npm cache any further") || !strings.Contains(out, "remove the folder") {
		t.Errorf("the log does not say why the seed stopped:\n%s", out)
	}
}
