package cli_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Issue 32, attack 1 through a check: a task's check links the folders of
// its npm cache (the checks' cache of the story) to a folder outside; the
// next `verify` seeds that cache as the user, outside the sandbox, and
// writes nothing there, saying why.
func TestVerifySeedNeverFollowsACheck(t *testing.T) {
	testkit.Bwrap(t)
	outside := t.TempDir()
	plant := `c="$npm_config_cache/_cacache"; rm -rf "$c/content-v2" "$c/index-v5"; ln -s ` + outside + ` "$c/content-v2" && ln -s ` + outside + ` "$c/index-v5"`
	root := goStoryRepo(t, plant, "s")
	warm := filepath.Join(t.TempDir(), "npm")
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
	testkit.WriteFiles(t, root, map[string]string{"package-lock.json": `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/left-pad": {}}}` + "\n"})
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "lockfile")
	env := append(testkit.CleanEnv(), "npm_config_cache="+warm)
	if r := testkit.Run(t, root, env, "", testkit.Binary(t), "verify", "s"); r.Code != 0 {
		t.Fatalf("the first verify (its check plants the links): exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "verify", "s")
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("verify's seed wrote into the folder the check linked: %v\n%s%s", entries, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "not seeding the story's npm cache any further") {
		t.Errorf("verify does not say why the seed stopped:\n%s%s", r.Stdout, r.Stderr)
	}
}
