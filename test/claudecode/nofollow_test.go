package claudecode

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
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 32, attack 1, with the real CLI: the agent's Bash, in Claude
// Code's own sandbox, replaces its npm cache's content-v2 and index-v5 with
// links to a folder outside; the story's next worker start seeds that
// cache as the user and writes nothing there, saying why in its log.
func TestNpmSeedLinksWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	root := filepath.Join(t.TempDir(), "repo")
	outside := t.TempDir()
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
	// Claude Code runs no command whose variables it cannot check: the
	// agent runs a script, written once the cache's path is known.
	script := filepath.Join(t.TempDir(), "plant.sh")
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/npm/story.json": `{"id": "npm", "title": "Npm", "description": ` + jsonc.Quote("Npm.\nFAKEAPI bash 'bash "+script+" > plant.txt 2>&1'") + "}\n",
		".saga/stories/npm/t.json":     `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": []}` + "\n",
		"package-lock.json":            `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/left-pad": {}}}` + "\n",
	})
	testkit.InitRepo(t, root)
	agent, err := buildcache.CachePath(root, "npm", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(agent, "npm", "_cacache")
	os.WriteFile(script, []byte("rm -rf "+c+"/content-v2 "+c+"/index-v5 && ln -s "+outside+" "+c+"/content-v2 && ln -s "+outside+" "+c+"/index-v5 && echo planted\n"), 0o755)
	base := t.TempDir()
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+filepath.Join(base, "no-gh"), "npm_config_cache="+warm)
	worker := func() testkit.Result {
		return testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "npm", "--max-cycles", "1")
	}
	r := worker()
	if fi, err := os.Lstat(filepath.Join(agent, "npm", "_cacache", "content-v2")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		wt := filepath.Join(root, ".saga", "worktrees", "npm")
		t.Fatalf("the agent did not link its cache (exit %d): %v %v\n%s\n%s%s", r.Code, fi, err, testkit.FileText(filepath.Join(wt, "plant.txt")), r.Stdout, r.Stderr)
	}
	r = worker()
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the next start's seed wrote into the folder the agent linked (exit %d): %v\n%s%s", r.Code, entries, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "not seeding the story's npm cache any further") {
		t.Errorf("the log does not say why the seed stopped:\n%s%s", r.Stdout, r.Stderr)
	}
}
