package worker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// git runs git with an argument vector (never a shell string) in dir,
// without repository hooks: nothing the agent planted in the repository's
// configuration runs outside its sandbox.
type git struct {
	bin string
	dir string
}

func (g git) run(ctx context.Context, args ...string) (string, error) {
	out, err := g.raw(ctx, args...)
	return strings.TrimSpace(out), err
}

// raw is run without trimming the output (porcelain formats start with a
// space).
func (g git) raw(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, g.bin, append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.String(), nil
}

func (g git) in(dir string) git { return git{bin: g.bin, dir: dir} }

// ok reports whether a git command succeeds (for probes like "does this ref exist").
func (g git) ok(ctx context.Context, args ...string) bool {
	_, err := g.run(ctx, args...)
	return err == nil
}

// hasRemote reports whether the repository has a remote named origin.
func (g git) hasRemote(ctx context.Context) bool {
	out, err := g.run(ctx, "remote")
	if err != nil {
		return false
	}
	for _, r := range strings.Fields(out) {
		if r == "origin" {
			return true
		}
	}
	return false
}

// identity returns -c flags giving commits an author when the repository
// has none configured (a fresh CI machine); the user's own identity wins.
func (g git) identity(ctx context.Context) []string {
	if email, _ := g.run(ctx, "config", "user.email"); email != "" {
		return nil
	}
	return []string{"-c", "user.name=saga-lsp worker", "-c", "user.email=saga-lsp@localhost"}
}

// excludeWorktrees adds the worktrees folder to the repository's
// info/exclude so story worktrees never show up as untracked files.
func (g git) excludeWorktrees(ctx context.Context) error {
	common, err := g.run(ctx, "rev-parse", "--git-common-dir")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(g.dir, common)
	}
	path := filepath.Join(common, "info", "exclude")
	data, _ := os.ReadFile(path)
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == store.WorktreesRel+"/" {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, store.WorktreesRel+"/\n"...)
	return os.WriteFile(path, data, 0o644)
}
