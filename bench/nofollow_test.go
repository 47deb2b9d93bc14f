package bench

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store"
)

// BenchmarkNpmSeed200 is what a story's start spends seeding its npm cache
// (buildcache.SeedNpm, issue 32: every write below the story's cache through
// filesafe.Beneath): a lockfile of 200 packages, each a 32 KiB tarball in the
// user's warm cache, copied into a fresh story cache. Part of the per-story
// overhead (StoryOverhead's budget, ≤ 0.5 s); compare a commit before
// issue 32 with the same benchmark to see what the no-follow writes cost.
func BenchmarkNpmSeed200(b *testing.B) {
	warm, repo := b.TempDir(), b.TempDir()
	files := map[string]string{}
	var lock strings.Builder
	lock.WriteString(`{"lockfileVersion": 3, "packages": {"": {}`)
	for i := range 200 {
		pkg := fmt.Sprintf("pkg%03d", i)
		body := strings.Repeat(pkg, 32<<10/len(pkg))
		sum := sha512.Sum512([]byte(body))
		h := hex.EncodeToString(sum[:])
		key := "make-fetch-happen:request-cache:https://registry.example/" + pkg + "/-/" + pkg + "-1.0.0.tgz"
		k := sha256.Sum256([]byte(key))
		kh := hex.EncodeToString(k[:])
		files["_cacache/content-v2/sha512/"+h[:2]+"/"+h[2:4]+"/"+h[4:]] = body
		files["_cacache/index-v5/"+kh[:2]+"/"+kh[2:4]+"/"+kh[4:]] = fmt.Sprintf("\nx\t{\"key\":%q,\"integrity\":%q}", key, "sha512-"+base64.StdEncoding.EncodeToString(sum[:]))
		fmt.Fprintf(&lock, `, "node_modules/%s": {}`, pkg)
	}
	lock.WriteString("}}\n")
	testkit.WriteFiles(b, warm, files)
	testkit.WriteFiles(b, repo, map[string]string{"package-lock.json": lock.String()})
	var secs []float64
	for b.Loop() {
		b.StopTimer()
		story := b.TempDir()
		b.StartTimer()
		start := time.Now()
		n, err := buildcache.SeedNpm(story, repo, buildcache.Warm{Npm: warm})
		secs = append(secs, time.Since(start).Seconds())
		b.StopTimer()
		if err != nil || n != 200 {
			b.Fatalf("seeded %d: %v", n, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(median(secs), "seed-s")
}

// BenchmarkStatusWrite is one task status written the hook's way
// (store.SetTaskStatus: lock, read, splice, atomic write below the
// workspace root), in process: the part of the hook's PostToolUse sync that
// issue 32's no-follow writes changed (HookSyncPaired is its budget).
func BenchmarkStatusWrite(b *testing.B) {
	root := b.TempDir()
	testkit.WriteFiles(b, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "d"}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": []}` + "\n",
	})
	testkit.Git(b, root, "init", "-q")
	ctx := context.Background()
	statuses := []string{store.StatusInProgress, store.StatusPending}
	var ms []float64
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := store.SetTaskStatus(ctx, root, "s", "t", statuses[i%2]); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	b.ReportMetric(median(ms), "write-ms")
}
