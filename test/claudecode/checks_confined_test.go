package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Attack 2 of issue 22 with the real Claude Code: a task's check copies
// ~/.ssh and its environment — which, through Claude Code's hook, holds
// the API key claude-offline gives it — into a file of the worktree, which
// the worker commits. The file reaches the story branch; the key and the
// secrets do not. The home lies outside /tmp, so that its stores are
// hidden by the sandbox's rules, not by where the test put them.
func TestCheckLeaksNothingWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	testkit.Bwrap(t)
	tools := os.Getenv("SAGA_TOOLS_CACHE")
	if tools == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			testkit.Needs(t, "a home for the tools' cache: "+err.Error())
		}
		tools = filepath.Join(home, ".cache", "saga-tools")
	}
	base := testkit.HostDir(t)
	secret := "SECRET-" + filepath.Base(base)
	home, root := filepath.Join(base, "home"), filepath.Join(base, "repo")
	testkit.WriteFiles(t, home, map[string]string{".ssh/id_ed25519": secret + "\n", ".netrc": "machine github.com password " + secret + "\n"})
	leak := "{ cat ~/.ssh/id_ed25519 ~/.netrc; env; } > leak.txt 2>&1; true"
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/leak/story.json": `{"id": "leak", "title": "Leak", "description": "Do the task."}` + "\n",
		".saga/stories/leak/t.json":     `{"id": "t", "subject": "Do it", "description": "Do it.", "status": "pending", "blockedBy": [], "checks": [` + jsonc.Quote(leak) + `]}` + "\n",
	})
	testkit.InitRepo(t, root)
	env := append(testkit.CleanEnv(), "HOME="+home, "SAGA_TOOLS_CACHE="+tools, "SAGA_CLAUDE="+claude, "GH_TOKEN="+secret,
		"CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"), "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
		"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"), "SAGA_GH="+filepath.Join(base, "no-gh"))
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "leak", "--max-cycles", "2")
	if r.Code != 0 {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := testkit.Git(t, root, "show", "story/leak:leak.txt")
	if !strings.Contains(got, "PATH=") {
		t.Fatalf("the check's file is not on the branch:\n%s", got)
	}
	log := testkit.Git(t, root, "log", "-p", "main..story/leak")
	for _, s := range []string{secret, "sk-ant-offline-not-a-key", "ANTHROPIC_"} {
		if strings.Contains(log, s) {
			t.Errorf("%s reached the story branch:\n%s", s, got)
		}
	}
}

// Attack 3 of issue 22 with the real Claude Code: saga-lsp runs as root
// (containers, CI, devcontainers) and a task's check remounts / read-write
// and writes outside the worktree, then tries to mount over a host path.
// The check's sandbox holds no capability even for root: nothing outside
// changes; the check's own report, committed by the worker, says why.
func TestRootCheckCannotRemountWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("attack 3 is saga-lsp run as root; this test runs as uid", os.Geteuid())
	}
	claude := claudeOffline(t)
	testkit.Bwrap(t)
	base := testkit.HostDir(t)
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := "{ mount -o remount,rw / && echo pwned > " + outside + "/remount; mount -t tmpfs none " + outside + " && echo mounted; echo pwned > " + outside + "/direct; } > probe.txt 2>&1; true"
	root := filepath.Join(base, "repo")
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/root/story.json": `{"id": "root", "title": "Root", "description": "Do the task."}` + "\n",
		".saga/stories/root/t.json":     `{"id": "t", "subject": "Do it", "description": "Do it.", "status": "pending", "blockedBy": [], "checks": [` + jsonc.Quote(probe) + `]}` + "\n",
	})
	testkit.InitRepo(t, root)
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude,
		"CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"), "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
		"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"), "SAGA_GH="+filepath.Join(base, "no-gh"))
	if tools := os.Getenv("SAGA_TOOLS_CACHE"); tools != "" {
		env = append(env, "SAGA_TOOLS_CACHE="+tools)
	}
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "root", "--max-cycles", "2")
	if r.Code != 0 {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := testkit.Git(t, root, "show", "story/root:probe.txt")
	t.Logf("the check's report:\n%s", got)
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) > 0 {
		t.Fatalf("the check reached outside its worktree (%v, %d entries); its report:\n%s", err, len(entries), got)
	}
	if strings.Contains(got, "mounted") || !strings.Contains(got, "ermission denied") && !strings.Contains(got, "Read-only") {
		t.Fatalf("the check's report does not show the refusals:\n%s", got)
	}
}
