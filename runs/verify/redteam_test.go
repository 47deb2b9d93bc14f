package verify_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Red team (issue 32, closing note): a go.work the story commits that
// points outside its worktree — at a module of the user's next to it, by a
// relative path and by an absolute one. The go command then treats that
// module as the workspace's, and what a check
// runs there — gofmt -w on the package's folder, `go mod tidy`, `go work
// sync` — writes its files. A check runs confined: the host's files are
// read-only to it, so the module outside is read (as any file of the host
// is; docs/security.md) but never written. The same command run without
// the sandbox does write it: the test shows its attack is real.
func TestGoWorkOutsideTheWorktreeIsReadOnly(t *testing.T) {
	testkit.NeedsTool(t, "go", "")
	b := newBox(t)
	goroot := strings.TrimSpace(testkit.Run(t, b.wt, nil, "", "go", "env", "GOROOT").Stdout)
	b.env = append(b.env, "GOTOOLCHAIN=local", "GOFLAGS=", "GOPROXY=off", "GOROOT="+goroot, "PATH="+filepath.Join(goroot, "bin")+":/usr/bin:/bin")
	outside := filepath.Join(b.base, "users-module")
	unformatted := "package out\n\nfunc  F( )  int { return 1 }\n"
	testkit.WriteFiles(t, outside, map[string]string{"go.mod": "module example.com/out\n\ngo 1.24\n", "out.go": unformatted})
	for name, use := range map[string]string{"relative": "../users-module", "absolute": outside} {
		t.Run(name, func(t *testing.T) {
			testkit.WriteFiles(t, b.wt, map[string]string{
				"go.mod":  "module example.com/story\n\ngo 1.24\n",
				"go.work": "go 1.24\n\nuse (\n\t.\n\t" + use + "\n)\n",
				"s.go":    "package story\n",
			})
			// The go command finds the module through go.work; gofmt
			// rewrites it in place (go fmt itself does not take a
			// workspace's other modules).
			const check = `dir=$(go list -f '{{.Dir}}' example.com/out) && gofmt -w "$dir/out.go"`
			res := b.run(t, check)
			if got := testkit.ReadFile(t, filepath.Join(outside, "out.go")); got != unformatted {
				t.Fatalf("the confined check wrote the module outside its worktree:\n%s", got)
			}
			if res.Passed || !strings.Contains(res.Output, "read-only file system") {
				t.Errorf("the check's write outside was not refused as read-only: %s\n%s", res.Outcome(), res.Output)
			}
		})
	}
	// The attack is real: unconfined, the same command rewrites the file.
	cmd := exec.Command("sh", "-c", `gofmt -w "$(go list -f '{{.Dir}}' example.com/out)/out.go"`)
	cmd.Dir, cmd.Env = b.wt, append(b.env, "GOCACHE="+filepath.Join(b.cache, "go-build"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unconfined go fmt: %v\n%s", err, out)
	}
	if got := testkit.ReadFile(t, filepath.Join(outside, "out.go")); got == unformatted {
		t.Errorf("unconfined, go fmt did not write the module outside either: the test shows nothing")
	}
}
