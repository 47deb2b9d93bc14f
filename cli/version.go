package cli

import (
	"cmp"
	"fmt"
	"runtime/debug"
)

// Version is stamped by release builds and `make`
// (-ldflags "-X github.com/saga-ai/saga-lsp/cli.Version=v1.2.3"); empty
// otherwise, and version() asks the Go toolchain's record instead.
var Version string

const versionSynopsis = "version"

func runVersion(env *Env, args []string) int {
	c := newCmdLine("version")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos)); err != nil {
		return c.fail(env, err)
	}
	fmt.Fprintf(env.Stdout, "saga-lsp %s\n", version())
	return exitOK
}

// version is the version saga-lsp reports (docs/commands.md#version):
// the stamp of a release build; else what the Go toolchain recorded in the
// binary — the module's version for `go install …@v1.2.3`, a pseudo-version
// (v0.0.0-<time>-<commit>[+dirty]) for a `go build` in a git checkout, or
// the commit when only that was recorded; "unknown" when the build recorded
// nothing (outside a module, or -buildvcs=false in a copy without .git).
func version() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(info)
}

// versionOf is version() for a given build record.
func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}
