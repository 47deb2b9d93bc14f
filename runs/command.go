package runs

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// HookBinary is the name of the hook's own program: `saga-lsp hook` alone,
// which starts faster and leaves a completion's checks to saga-lsp (docs/hooks.md#the-hook-program).
const HookBinary = "saga-lsp-hook"

// HookCommand is the hook command line registered with Claude Code for the
// program prog, saga-lsp or saga-lsp-hook (Claude Code runs it with a
// shell). Both take the argument "hook".
func HookCommand(prog string) string { return ShellQuote(prog) + " hook" }

// HookProgram is the program a hook command should run for the saga-lsp
// binary self: the saga-lsp-hook beside it when that is a regular,
// executable file from the same build (same module version, commit and
// version stamp, read from both files' build records), else self. A
// saga-lsp-hook left from another build is never run: the worker and its
// hook share files whose format may change between versions.
func HookProgram(self string) string {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	companion := filepath.Join(filepath.Dir(self), HookBinary+exe)
	fi, err := os.Stat(companion)
	if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return self
	}
	want, err := buildinfo.ReadFile(self)
	if err != nil {
		return self
	}
	got, err := buildinfo.ReadFile(companion)
	if err != nil || buildOf(got) != buildOf(want) {
		return self
	}
	return companion
}

// buildOf is what tells one build of saga-lsp from another in a binary's
// build record: the module's version and sum, the commit, whether the tree
// was modified, and the flags that stamp the version.
func buildOf(info *buildinfo.BuildInfo) string {
	parts := []string{info.GoVersion, info.Main.Path, info.Main.Version, info.Main.Sum}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "-ldflags", "GOOS", "GOARCH":
			parts = append(parts, s.Key+"="+s.Value)
		}
	}
	return strings.Join(parts, "\n")
}

// ShellQuote quotes s for a POSIX shell: words of safe characters stay as
// they are, anything else is single-quoted.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '@' || r == '%' || r == '+' || r == '=' || r == ':' || r == ',' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
