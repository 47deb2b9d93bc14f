package cli_test

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
)

// Issue 22: `verify` reads the checks that count at the reference commit
// the story's last run recorded, never at a ref an agent could have moved
// or an object it could have planted.

const weakBad = `{"id": "bad", "subject": "Bad", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}` + "\n"

// weakened is verifyRepo with the story's worktree on story/s holding a
// commit that weakens bad's check (as its agent would), and a run record
// of the story (Reference: main's tip) when recorded.
func weakened(t *testing.T, recorded bool) (root, wt, ref, weak string) {
	t.Helper()
	root = verifyRepo(t)
	ref = testkit.Git(t, root, "rev-parse", "main")
	wt = testkit.Worktree(t, root, ".saga/worktrees/s", "story/s")
	testkit.WriteFiles(t, wt, map[string]string{".saga/stories/s/bad.json": weakBad})
	testkit.Git(t, wt, "commit", "-qam", "weaken")
	weak = testkit.Git(t, wt, "rev-parse", "HEAD")
	if recorded {
		if err := runs.WriteRecord(root, runs.Record{Story: "s", Status: runs.StatusFailed, Base: "main", Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}
	return root, wt, ref, weak
}

// strict tells that verify ran bad's real checks (and failed on them).
func strict(t *testing.T, r testkit.Result) {
	t.Helper()
	if r.Code != 1 || !strings.Contains(r.Stdout, "✗ bad: echo broken; exit 2 — exit status 2") {
		t.Errorf("verify did not run the checks as committed: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Attack 13: the agent moves refs/remotes/origin/main to its own commit
// (without a fetch, verify used to prefer origin's copy of the base when
// it was further along): verify reads at the recorded reference commit;
// without a record, at the fork from the local main.
func TestVerifyIgnoresAMovedRemoteRef(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		root, _, ref, weak := weakened(t, recorded)
		testkit.BareOrigin(t, root)
		testkit.Git(t, root, "update-ref", "refs/remotes/origin/main", weak)
		r := run(t, root, "verify", "s", "bad")
		strict(t, r)
		if recorded && !strings.Contains(r.Stdout, "checks as committed at "+ref[:12]+" (the reference commit its last run recorded, from main)") {
			t.Errorf("recorded: the header does not name the reference commit:\n%s", r.Stdout)
		}
	}
}

// Attack 4 and its kin, each planted in turn: a replace ref for the
// reference commit, a graft putting the agent's commit under the base's
// tip, an alternates file serving a forged object. verify runs the real
// checks or refuses, never the planted ones.
func TestVerifyIgnoresPlantedObjects(t *testing.T) {
	t.Run("replace ref", func(t *testing.T) {
		root, _, ref, weak := weakened(t, true)
		testkit.Git(t, root, "update-ref", "refs/replace/"+ref, weak)
		strict(t, run(t, root, "verify", "s", "bad"))
	})
	t.Run("graft", func(t *testing.T) {
		// No record: the fork of the story branch from main decides. The
		// base moved on; a graft makes the agent's commit the new tip's
		// parent, so the fork would be the agent's commit.
		root, _, _, weak := weakened(t, false)
		testkit.WriteFiles(t, root, map[string]string{"README": "moved\n"})
		testkit.Git(t, root, "commit", "-qam", "base moves")
		tip := testkit.Git(t, root, "rev-parse", "main")
		os.WriteFile(filepath.Join(root, ".git", "info", "grafts"), []byte(tip+" "+weak+"\n"), 0o644)
		strict(t, run(t, root, "verify", "s", "bad"))
	})
	t.Run("alternate", func(t *testing.T) {
		// A checkout sharing another repository's objects (git clone
		// --shared); the planted alternates file lists a folder first
		// that holds a forged object under bad.json's name at the
		// reference commit.
		src, _, ref, _ := weakened(t, false)
		root := filepath.Join(t.TempDir(), "clone")
		testkit.Git(t, src, "clone", "-q", "--shared", src, root)
		testkit.Git(t, root, "worktree", "add", "-q", "-b", "story/s", ".saga/worktrees/s", "origin/story/s")
		if err := runs.WriteRecord(root, runs.Record{Story: "s", Status: runs.StatusFailed, Base: "main", Reference: ref}); err != nil {
			t.Fatal(err)
		}
		blob := testkit.Git(t, root, "rev-parse", ref+":.saga/stories/s/bad.json")
		forged := t.TempDir()
		var b bytes.Buffer
		z := zlib.NewWriter(&b)
		fmt.Fprintf(z, "blob %d\x00%s", len(weakBad), weakBad)
		z.Close()
		os.MkdirAll(filepath.Join(forged, blob[:2]), 0o755)
		os.WriteFile(filepath.Join(forged, blob[:2], blob[2:]), b.Bytes(), 0o444)
		alternates := filepath.Join(root, ".git", "objects", "info", "alternates")
		legit, _ := os.ReadFile(alternates)
		os.WriteFile(alternates, append([]byte(forged+"\n"), legit...), 0o644)
		if got := testkit.Git(t, root, "cat-file", "blob", blob); !strings.Contains(got, `"true"`) {
			t.Fatalf("git does not read the forged object (the test proves nothing): %s", got)
		}
		r := run(t, root, "verify", "s", "bad")
		if r.Code == 0 || strings.Contains(r.Stdout, "✓") || !strings.Contains(r.Stderr, "does not match its hash") {
			t.Errorf("verify with a forged object: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// verify runs the checks with the story's checks caches, never with the
// caches its agent's Bash writes (buildcache.ChecksCacheDir).
func TestVerifyUsesTheChecksCaches(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": ""}` + "\n",
		".saga/stories/s/c.json":     `{"id": "c", "subject": "C", "description": "", "status": "pending", "blockedBy": [], "checks": ["echo \"cache=$GOCACHE\"; exit 1"]}` + "\n",
	})
	testkit.InitRepo(t, root)
	checks, err := buildcache.ChecksCachePath(root, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, root, "verify", "s"); !strings.Contains(r.Stdout, "cache="+checks+"/go-build") {
		t.Errorf("verify's checks ran with another cache:\n%s%s", r.Stdout, r.Stderr)
	}
}
