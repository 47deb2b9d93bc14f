package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Where checks cannot be confined — here a bwrap that fails as the real one
// does where Ubuntu 24.04's AppArmor blocks user namespaces — `verify` and
// `worker` refuse before running any, naming the fix;
// --allow-unconfined-checks runs them, saying so. (`run`'s refusal:
// runs/control.)
func TestUnconfinedChecksRefusedUnlessAllowed(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": ""}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": ["touch ran"]}` + "\n",
	})
	testkit.InitRepo(t, root)
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(testkit.CleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "verify", "s")
	for _, want := range []string{"saga-lsp verify: not running the checks of s: bubblewrap cannot create a user namespace here (bwrap: setting up uid map: Permission denied)",
		"sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0", "--allow-unconfined-checks"} {
		if r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Errorf("exit %d, want 2 and %q:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Fatal("a check ran unconfined")
	}
	r = testkit.Run(t, root, env, "", testkit.Binary(t), "verify", "s", "--allow-unconfined-checks")
	if r.Code != 0 || !strings.Contains(r.Stdout, "(unconfined)") || !strings.Contains(r.Stdout, "running UNCONFINED") {
		t.Errorf("--allow-unconfined-checks: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err != nil {
		t.Errorf("the check did not run: %v", err)
	}
	os.Remove(filepath.Join(root, "ran"))
	// The worker refuses the story before any agent runs; allowed, it runs
	// the checks unconfined.
	env = append(env, "SAGA_SESSION_DIR="+t.TempDir(), "CLAUDE_CONFIG_DIR="+t.TempDir(), "SAGA_STANDIN_SCRIPT=all")
	r = testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "s", "--dry-run", "--max-cycles", "1")
	if r.Code == 0 || !strings.Contains(r.Stdout, "the tasks' checks cannot run: bubblewrap cannot create a user namespace here") ||
		!strings.Contains(r.Stdout, "no run was started") {
		t.Errorf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "s", "--dry-run", "--max-cycles", "1", "--allow-unconfined-checks")
	if r.Code != 0 || !strings.Contains(r.Stdout, "UNCONFINED") {
		t.Errorf("worker --allow-unconfined-checks: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(root, ".saga", "worktrees", "s.dry", "ran")); err != nil { // a dry run's worktree
		t.Errorf("the check did not run in the worker's worktree: %v", err)
	}
}

// Attack 2, end to end with the stand-in agent: a task's check copies
// ~/.ssh and its environment into a file of the worktree, which the worker
// commits on the story branch. The file is there; no secret is. The home
// lies outside /tmp, so that the stores are hidden by the sandbox's rules,
// not by where the test put them; and inside /tmp, where the sandbox binds
// it back out of its private /tmp (issue 32, attack 5).
func TestCheckLeaksNothingIntoTheBranch(t *testing.T) {
	testkit.Bwrap(t)
	tmp, err := os.MkdirTemp("/tmp", "saga-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	for name, base := range map[string]string{"home outside /tmp": testkit.HostDir(t), "home under /tmp": tmp} {
		t.Run(name, func(t *testing.T) {
			secret := "SECRET-" + filepath.Base(base)
			home, root := filepath.Join(base, "home"), filepath.Join(base, "repo")
			testkit.WriteFiles(t, home, map[string]string{".ssh/id_ed25519": secret + "\n", ".aws/credentials": secret + "\n"})
			leak := "{ cat ~/.ssh/id_ed25519 ~/.aws/credentials; env; } > leak.txt 2>&1; true"
			testkit.WriteFiles(t, root, map[string]string{
				".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "Build it."}` + "\n",
				".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "Build it.", "status": "pending", "blockedBy": [], "checks": [` + strconvQuote(leak) + `]}` + "\n",
			})
			testkit.InitRepo(t, root)
			env := append(testkit.CleanEnv(), "HOME="+home, "ANTHROPIC_API_KEY="+secret, "GH_TOKEN="+secret, "SSH_AUTH_SOCK=/tmp/"+secret,
				"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"), "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_STANDIN_SCRIPT=all")
			r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "s", "--dry-run", "--max-cycles", "2")
			if r.Code != 0 {
				t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			// A dry run's branch (docs/worker.md#dry-runs).
			if got := testkit.Git(t, root, "show", "saga-dry/s:leak.txt"); !strings.Contains(got, "PATH=") {
				t.Fatalf("the check's file is not on the branch:\n%s", got)
			}
			if log := testkit.Git(t, root, "log", "-p", "main..saga-dry/s"); strings.Contains(log, secret) {
				t.Errorf("a secret reached the story branch:\n%s", log)
			}
		})
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
