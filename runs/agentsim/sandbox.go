// The Bash sandbox: its settings, and bubblewrap confinement laid out as
// Claude Code 2.1.330 lays it out on Linux.

package agentsim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// sandboxSettings is the "sandbox" object of a settings file.
type sandboxSettings struct {
	Enabled                  *bool `json:"enabled"`
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed"`
	AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands"`
	Filesystem               struct {
		AllowWrite []string `json:"allowWrite"`
		DenyWrite  []string `json:"denyWrite"`
	} `json:"filesystem"`
}

// sandboxConfig is the sandbox a session runs Bash in.
type sandboxConfig struct {
	on              bool // enabled, and bwrap and socat are there
	autoAllow       bool // sandboxed commands need no permission
	allowUnsandbox  bool // dangerouslyDisableSandbox may ask to run outside
	allowWrite      []string
	denyWrite       []string
	tmpDir          string // TMPDIR inside: <tmp>/claude-<uid>
	ccWritesCreated bool
}

// sourcedDoc is a settings document and the source it came from.
type sourcedDoc struct {
	source string // user, project, local or flag
	doc    *settingsDoc
}

// decideSandbox merges the sandbox settings of the loaded sources (later
// ones win; allowWrite and denyWrite paths add up). As 2.1.330 does, project
// and local allowWrite paths are ignored when the --settings flag sets
// allowUnsandboxedCommands to false; denyWrite paths, which only take
// away, count from every source. An enabled sandbox without bwrap or
// socat on PATH is off, with Claude Code's warning on stderr.
func (s *session) decideSandbox(docs []sourcedDoc) {
	sb := &sandboxConfig{autoAllow: true, allowUnsandbox: true}
	lockedByFlag := false
	for _, d := range docs {
		if d.source == "flag" && d.doc.Sandbox != nil && d.doc.Sandbox.AllowUnsandboxedCommands != nil && !*d.doc.Sandbox.AllowUnsandboxedCommands {
			lockedByFlag = true
		}
	}
	for _, d := range docs {
		c := d.doc.Sandbox
		if c == nil {
			continue
		}
		if c.Enabled != nil {
			sb.on = *c.Enabled
		}
		if c.AutoAllowBashIfSandboxed != nil {
			sb.autoAllow = *c.AutoAllowBashIfSandboxed
		}
		if c.AllowUnsandboxedCommands != nil {
			sb.allowUnsandbox = *c.AllowUnsandboxedCommands
		}
		for _, p := range c.Filesystem.DenyWrite {
			sb.denyWrite = append(sb.denyWrite, s.settingsPath(p))
		}
		if lockedByFlag && (d.source == "project" || d.source == "local") {
			continue
		}
		for _, p := range c.Filesystem.AllowWrite {
			sb.allowWrite = append(sb.allowWrite, s.settingsPath(p))
		}
	}
	s.sandbox = sb
	if !sb.on {
		return
	}
	var missing []string
	if s.lookPath("bwrap") == "" {
		missing = append(missing, "bubblewrap (bwrap) not installed")
	}
	if s.lookPath("socat") == "" {
		missing = append(missing, "socat not installed")
	}
	if len(missing) > 0 {
		sb.on = false
		fmt.Fprintf(s.stderr, "\n⚠ Sandbox disabled: sandbox is enabled but dependencies are missing: %s · install missing tools (e.g. apt install bubblewrap socat) or see https://code.claude.com/docs/en/sandboxing\n"+
			"  Commands will run WITHOUT sandboxing. Network and filesystem restrictions will NOT be enforced.\n\n", strings.Join(missing, ", "))
		return
	}
	base := s.getenv("CLAUDE_CODE_TMPDIR")
	if base == "" {
		base = s.getenv("TMPDIR")
	}
	if base == "" {
		base = "/tmp"
	}
	sb.tmpDir = filepath.Join(base, "claude-"+strconv.Itoa(os.Getuid()))
}

// settingsPath resolves a path written in settings: "~/" is the home
// directory, a relative path is the working directory's.
func (s *session) settingsPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(s.getenv("HOME"), rest)
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(s.cwd, p)
	}
	return filepath.Clean(p)
}

// lookPath finds a program on the session's PATH ("" when absent).
func (s *session) lookPath(name string) string {
	for _, dir := range filepath.SplitList(s.getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// protectedNames are the entries of the working directory Claude Code's
// sandbox mounts read-only: the real file when it exists, else /dev/null —
// which leaves an empty placeholder file there while the command runs.
func protectedNames() []string {
	return []string{".claude/settings.json", ".claude/settings.local.json", ".claude/skills", ".claude/hooks",
		".claude/launch.json", ".claude/workflows", ".claude/routines", ".claude/output-styles",
		".claude/scheduled_tasks.json", ".claude/loop.md", ".mcp.json", ".claude/commands", ".claude/agents",
		".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc",
		".vscode", ".idea"}
}

// bwrapCommand is `bwrap … /bin/bash -c <script>` for a sandboxed command:
// / read-only (so /tmp and $HOME/.cache too), the working directories, the
// allowWrite paths and TMPDIR writable, the protected entries and the git
// hooks and config read-only — a worktree's common git dir writable for
// commits, its hooks and config not — and last the denyWrite paths
// read-only, which wins over a writable path around or inside them (as
// 2.1.330 does: an allowWrite path inside a denied one is not writable). It returns the placeholder files the
// mounts will create, for the caller to remove once the command has run.
func (s *session) bwrapCommand(script string) (args []string, placeholders []string, err error) {
	sb := s.sandbox
	if err := os.MkdirAll(sb.tmpDir, 0o700); err != nil {
		return nil, nil, err
	}
	if !sb.ccWritesCreated {
		// Claude Code keeps this directory, so it stays after the run.
		os.MkdirAll(filepath.Join(s.cwd, ".claude", ".cc-writes"), 0o700)
		sb.ccWritesCreated = true
	}
	args = []string{"--new-session", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--bind", sb.tmpDir, sb.tmpDir}
	for _, d := range s.workDirs {
		args = append(args, "--bind", d, d)
	}
	for _, p := range sb.allowWrite {
		if _, err := os.Stat(p); err == nil {
			args = append(args, "--bind", p, p)
		}
	}
	readOnly := func(p string) {
		if _, err := os.Lstat(p); err == nil {
			args = append(args, "--ro-bind", p, p)
			return
		}
		args = append(args, "--ro-bind", "/dev/null", p)
		placeholders = append(placeholders, p)
	}
	gitDir, commonDir := gitDirs(s.cwd)
	if commonDir != "" && !s.insideWorkDirs(commonDir) {
		args = append(args, "--bind", commonDir, commonDir)
	}
	if commonDir != "" {
		for _, n := range []string{"hooks", "config"} {
			if _, err := os.Stat(filepath.Join(commonDir, n)); err == nil {
				args = append(args, "--ro-bind", filepath.Join(commonDir, n), filepath.Join(commonDir, n))
			}
		}
		readOnly(filepath.Join(commonDir, "config.lock"))                   // `git config` cannot take the lock
		readOnly(filepath.Join(commonDir, "objects", "info", "alternates")) // as 2.1.330: no planted object store
	}
	if gitDir != commonDir {
		for _, n := range []string{"config.worktree", "commondir", "gitdir"} {
			if p := filepath.Join(gitDir, n); fileExists(p) {
				args = append(args, "--ro-bind", p, p)
			}
		}
		if p := filepath.Join(s.cwd, ".git"); fileExists(p) {
			args = append(args, "--ro-bind", p, p)
		}
	}
	args = append(args, "--ro-bind", filepath.Join(s.cwd, ".claude", ".cc-writes"), filepath.Join(s.cwd, ".claude", ".cc-writes"))
	for _, n := range protectedNames() {
		readOnly(filepath.Join(s.cwd, n))
	}
	for _, p := range sb.denyWrite {
		if _, err := os.Lstat(p); err == nil {
			args = append(args, "--ro-bind", p, p)
		}
	}
	args = append(args, "--chdir", s.cwd, "--setenv", "TMPDIR", sb.tmpDir, "--", "/bin/bash", "-c", script)
	return args, placeholders, nil
}

// gitDirs finds the working directory's git dir and common dir: both
// <cwd>/.git for a checkout; for a worktree (.git is a "gitdir:" file) its
// own dir and the repository's. "" when there is no .git.
func gitDirs(cwd string) (gitDir, commonDir string) {
	dotGit := filepath.Join(cwd, ".git")
	st, err := os.Stat(dotGit)
	switch {
	case err != nil:
		return "", ""
	case st.IsDir():
		return dotGit, dotGit
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return "", ""
	}
	gitDir = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(data)), "gitdir:"))
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(cwd, gitDir)
	}
	commonDir = gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = strings.TrimSpace(string(c))
		if !filepath.IsAbs(commonDir) {
			commonDir = filepath.Join(gitDir, commonDir)
		}
	}
	return filepath.Clean(gitDir), filepath.Clean(commonDir)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// bwrapPath is the bwrap binary on the session's PATH.
func (s *session) bwrapPath() (string, error) {
	if p := s.lookPath("bwrap"); p != "" {
		return p, nil
	}
	return exec.LookPath("bwrap")
}
