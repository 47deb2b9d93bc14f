package github

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Pin is the version of saga-lsp a workflow written by this build installs
// (docs/github-actions.md#which-saga-lsp-the-job-runs): stamped, when it is
// a release (`-X …/cli.Version=v1.2.3`, a tag's `git describe`); else the
// module version Go recorded (`go install …@v1.2.3`, or the pseudo-version
// Go gives a build in a git checkout — after the latest tag,
// vX.Y.(Z+1)-0.<time>-<commit>); else the pseudo-version of the commit the
// build recorded, v0.0.0-<commit time, UTC>-<12 digits of the commit>. Go's
// module proxy serves any of them, a pseudo-version once its commit is
// pushed to saga-lsp's repository. A build from a modified tree
// (vcs.modified) has no version that names its code: DirtyBuildError. A
// build that recorded nothing: NotReleaseError.
func Pin(stamped string, info *debug.BuildInfo) (string, error) {
	if Release(stamped) {
		return stamped, nil
	}
	shown := stamped
	if info == nil || info.Main.Path != Module {
		return "", &NotReleaseError{Version: shownVersion(shown)}
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	v := info.Main.Version
	if modified || strings.HasSuffix(v, "+dirty") {
		return "", &DirtyBuildError{Revision: rev}
	}
	if v != "(devel)" && Release(v) {
		return v, nil
	}
	t, err := time.Parse(time.RFC3339, at)
	if !regexp.MustCompile(`^[0-9a-f]{40,}$`).MatchString(rev) || err != nil {
		if shown == "" {
			shown = v
		}
		return "", &NotReleaseError{Version: shownVersion(shown)}
	}
	return PseudoVersion(rev, t), nil
}

// PseudoVersion is Go's pseudo-version of a commit with no tag before it:
// v0.0.0-yyyymmddhhmmss-abcdefabcdef, its commit time in UTC.
func PseudoVersion(rev string, at time.Time) string {
	return "v0.0.0-" + at.UTC().Format("20060102150405") + "-" + rev[:12]
}

// IsPseudoVersion tells a pseudo-version (a commit) from a release tag.
func IsPseudoVersion(v string) bool {
	return regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.-]*\.)?[0-9]{14}-[0-9a-f]{12}$`).MatchString(v)
}

func shownVersion(v string) string {
	if v == "" || v == "(devel)" {
		return "unknown"
	}
	return v
}

// DirtyBuildError refuses a build from a modified tree: no version the
// runner could install holds its code.
type DirtyBuildError struct{ Revision string }

func (e *DirtyBuildError) Error() string {
	at := "a commit"
	if len(e.Revision) >= 12 {
		at = "commit " + e.Revision[:12]
	}
	return fmt.Sprintf("this saga-lsp was built from a modified tree (%s plus uncommitted changes), so the workflow could not install the same one on the runner: "+
		"commit the changes, push them to saga-lsp's repository, build again and run this again (the workflow then pins that commit's pseudo-version); "+
		"or install a release (go install %s/cmd/saga-lsp@vX.Y.Z); or, in saga-lsp's own repository, pass --from-source", at, Module)
}
