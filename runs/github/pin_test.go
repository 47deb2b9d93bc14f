package github_test

import (
	"errors"
	"runtime/debug"
	"testing"

	"github.com/saga-ai/saga-lsp/runs/github"
)

// TestPin: which version a workflow pins for a build's stamp and the
// build record Go wrote (the binaries themselves:
// cli's TestInstallGitHubActionsPinsCommit).
func TestPin(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	record := func(version string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: github.Module, Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	vcs := []string{"vcs.revision", rev, "vcs.time", "2026-11-28T16:20:24Z", "vcs.modified", "false"}
	for _, c := range []struct {
		name, stamped string
		info          *debug.BuildInfo
		want          string
		dirty         bool
	}{
		{"a release stamp", "v1.2.3", nil, "v1.2.3", false},
		{"go install @tag", "", record("v1.2.3"), "v1.2.3", false},
		{"Go's pseudo-version after a tag", "", record("v1.2.4-0.20261128162024-0123456789ab", vcs...), "v1.2.4-0.20261128162024-0123456789ab", false},
		{"make build's describe stamp", "v1.2.3-4-g0123456", record("v1.2.4-0.20261128162024-0123456789ab", vcs...), "v1.2.4-0.20261128162024-0123456789ab", false},
		{"computed from the commit", "0123456", record("(devel)", vcs...), "v0.0.0-20261128162024-0123456789ab", false},
		{"commit time in another zone", "", record("(devel)", "vcs.revision", rev, "vcs.time", "2026-11-28T17:20:24+01:00"), "v0.0.0-20261128162024-0123456789ab", false},
		{"modified tree", "", record("(devel)", append(vcs[:4:4], "vcs.modified", "true")...), "", true},
		{"Go's +dirty", "v1.2.3-dirty", record("v0.0.0-20261128162024-0123456789ab+dirty", "vcs.revision", rev), "", true},
		{"nothing recorded", "", record("(devel)"), "", false},
		{"another module's build", "", &debug.BuildInfo{Main: debug.Module{Path: "example.com/other", Version: "v1.0.0"}}, "", false},
	} {
		got, err := github.Pin(c.stamped, c.info)
		var dirty *github.DirtyBuildError
		var notRelease *github.NotReleaseError
		switch {
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%s: Pin = %q, %v; want %q", c.name, got, err, c.want)
		case c.dirty && !errors.As(err, &dirty):
			t.Errorf("%s: Pin = %q, %v; want a DirtyBuildError", c.name, got, err)
		case c.want == "" && !c.dirty && !errors.As(err, &notRelease):
			t.Errorf("%s: Pin = %q, %v; want a NotReleaseError", c.name, got, err)
		}
		if c.want != "" && github.IsPseudoVersion(c.want) != (c.want != "v1.2.3") {
			t.Errorf("%s: IsPseudoVersion(%q) = %v", c.name, c.want, !(c.want != "v1.2.3"))
		}
	}
}
