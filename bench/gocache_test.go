package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// BenchmarkWarmFirstCheck is issue 24's budget for warm build caches
// (docs/security.md#warm-build-caches): a fresh story's first `go test
// ./...` gate check — run the way the gate runs it, by verify's runner
// under bubblewrap, in a new worktree, with the story's new, empty caches
// over the user's warm Go cache — takes at most 2× the same command with
// the user's warm cache itself, run in a new worktree too (the objects of
// a module's own packages name their directory: in a new one they build
// again, and their tests run, whoever's cache it is). The module is
// generated (20 packages in a chain, each with a test); the user's cache
// is a GOCACHE the benchmark warms once in the checkout. Also reported:
// the first check in the checkout itself (`verify` before the story's
// first run) against the user's `go test ./...` there (its results
// cached), and, once, the cold first check every story paid before.
func BenchmarkWarmFirstCheck(b *testing.B) {
	testkit.Bwrap(b)
	bin := builtBinary(b)
	checkout := goModule(b, 20)
	userCache := filepath.Join(b.TempDir(), "go-build")
	env := append(testkit.CleanEnv(), "GOCACHE="+userCache, "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
	goTest := func(dir string) time.Duration {
		start := time.Now()
		cmd := exec.Command("go", "test", "./...")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go test: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	goTest(checkout) // warms the user's cache
	// worktree is a new copy of the checkout elsewhere.
	worktree := func() string {
		wt := filepath.Join(b.TempDir(), "worktree")
		if err := os.CopyFS(wt, os.DirFS(checkout)); err != nil {
			b.Fatal(err)
		}
		return wt
	}
	ctx := context.Background()
	// firstCheck runs the gate's check in dir with a story's new caches.
	firstCheck := func(dir string, warm buildcache.Warm) time.Duration {
		cache := filepath.Join(b.TempDir(), "story")
		os.MkdirAll(filepath.Join(cache, "tmp"), 0o700)
		checks, err := verify.Prepare(ctx, verify.Setup{Dir: dir, Cache: cache, Warm: warm})
		if err != nil {
			b.Fatal(err)
		}
		r := checks.Runner
		r.Env = env
		if r.Mode != verify.Confined {
			b.Fatalf("%s: %s", r.Mode, r.Why)
		}
		res := r.Run(ctx, "go test ./...", 10*time.Minute)
		if !res.Passed {
			b.Fatalf("the story's first check: %s\n%s", res.Outcome(), res.Output)
		}
		return res.Duration
	}
	// Once, for comparison: what every story paid before (cold).
	cold := firstCheck(worktree(), buildcache.Warm{})
	warm := buildcache.Warm{Go: userCache, Prog: bin}
	var userWtS, firstS, userS, checkoutS []float64
	for b.Loop() {
		userWt, first := goTest(worktree()), firstCheck(worktree(), warm)
		user, inCheckout := goTest(checkout), firstCheck(checkout, warm)
		userWtS, firstS = append(userWtS, userWt.Seconds()), append(firstS, first.Seconds())
		userS, checkoutS = append(userS, user.Seconds()), append(checkoutS, inCheckout.Seconds())
	}
	b.ReportMetric(cold.Seconds(), "story-cold-s")
	b.ReportMetric(median(userWtS), "user-worktree-s")
	b.ReportMetric(median(firstS), "story-first-s")
	b.ReportMetric(median(firstS)/median(userWtS), "first/warm")
	b.ReportMetric(median(userS), "user-checkout-s")
	b.ReportMetric(median(checkoutS)/median(userS), "checkout-first/warm")
}

// goModule generates a Go module of n packages, p00 … p<n-1>, each
// importing the previous one and a few standard packages, each with a
// test: deterministic, so that every run measures the same builds.
func goModule(b *testing.B, n int) string {
	dir := b.TempDir()
	files := map[string]string{"go.mod": "module bench\n\ngo 1.24\n"}
	for i := range n {
		p := fmt.Sprintf("p%02d", i)
		imp, call := `"strings"`, `strings.Repeat("x", 1)`
		if i > 0 {
			imp, call = fmt.Sprintf(`"strings"; "bench/p%02d"`, i-1), fmt.Sprintf(`strings.Repeat(p%02d.F(), 1)`, i-1)
		}
		files[p+"/"+p+".go"] = fmt.Sprintf("package %s\n\nimport (%s; \"strconv\")\n\nfunc F() string { return %s + strconv.Itoa(%d) }\n", p, imp, call, i)
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport (\"strings\"; \"testing\")\n\nfunc TestF(t *testing.T) {\n\tif !strings.HasSuffix(F(), %q) {\n\t\tt.Fatal(F())\n\t}\n}\n", p, fmt.Sprint(i))
	}
	for rel, text := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(strings.TrimLeft(text, "\n")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
