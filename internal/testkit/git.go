package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs git in dir and fails the test on an error; it returns the output
// without surrounding space. Git runs isolated from the user's and the
// system's configuration and from GIT_* variables (a git hook running the
// tests sets GIT_DIR, which would send git elsewhere), on branch main,
// unsigned, with a test identity.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitEnv() []string {
	var env []string
	for _, kv := range CleanEnv() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
}

// GitRepo copies src into a fresh git repository (branch main, a local
// identity) with everything committed once, and returns its root.
func GitRepo(tb testing.TB, src string) string {
	tb.Helper()
	root := tb.TempDir()
	if src != "" {
		CopyInto(tb, src, root)
	}
	InitRepo(tb, root)
	return root
}

// InitRepo makes dir (created if missing) a git repository on branch main
// with a local identity, for the programs under test that commit, and
// commits what it holds.
func InitRepo(tb testing.TB, dir string) {
	tb.Helper()
	NeedsTool(tb, "git", "")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "init", "-q")
	Git(tb, dir, "config", "user.email", "test@example.com")
	Git(tb, dir, "config", "user.name", "Test")
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", "workspace")
}

// Worktree adds a worktree of repo at rel (relative to repo) on a new
// branch, and returns its path.
func Worktree(tb testing.TB, repo, rel, branch string) string {
	tb.Helper()
	wt := filepath.Join(repo, filepath.FromSlash(rel))
	Git(tb, repo, "worktree", "add", "-q", "-b", branch, wt)
	return wt
}

// BareOrigin adds a bare repository in a temp dir as the remote origin of
// repo and pushes main to it; it returns the bare repository's path.
func BareOrigin(tb testing.TB, repo string) string {
	tb.Helper()
	bare := filepath.Join(tb.TempDir(), "origin.git")
	Git(tb, repo, "init", "-q", "--bare", bare)
	Git(tb, repo, "remote", "add", "origin", bare)
	Git(tb, repo, "push", "-q", "-u", "origin", "main")
	return bare
}

// GitCalls puts a git first on PATH (tb.Setenv: no parallel test) that
// notes each call before it runs the real one, and returns a reader of
// the calls since its last read: each call's words, the leading
// `-c key=value` pairs (git.Repo's fixed settings) left out.
func GitCalls(tb testing.TB) func() [][]string {
	tb.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		tb.Fatal(err)
	}
	bin, log := tb.TempDir(), filepath.Join(tb.TempDir(), "calls")
	wrapper := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		tb.Fatal(err)
	}
	tb.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() [][]string {
		tb.Helper()
		data, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			tb.Fatal(err)
		}
		os.Remove(log)
		var calls [][]string
		for line := range strings.Lines(string(data)) {
			words := strings.Fields(line)
			for len(words) >= 2 && words[0] == "-c" {
				words = words[2:]
			}
			calls = append(calls, words)
		}
		return calls
	}
}
