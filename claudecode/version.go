package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// MinVersion is the oldest Claude Code saga-lsp's worker runs: 2.1.295 is
// the first that honours "onFailure": "block" on a command hook, which
// makes a PreToolUse write-scope hook that crashes, hangs or is killed
// block the write instead of letting it through (docs/hooks.md#failing-closed).
// The one place this number lives: the worker and `doctor` read it here.
const MinVersion = "2.1.295"

// Release is a Claude Code release: major.minor.patch.
type Release struct{ Major, Minor, Patch int }

func (v Release) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less tells whether v is an older release than w.
func (v Release) Less(w Release) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// ParseVersion reads the version `claude --version` prints ("2.1.330
// (Claude Code)"), or a bare "2.1.330": the first word, three decimal
// numbers; a pre-release or build suffix ("-beta.1", "+abc") is ignored.
// Three numbers are all Claude Code's releases carry, so no semver library.
func ParseVersion(s string) (Release, error) {
	word, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	word = strings.TrimPrefix(word, "v")
	if i := strings.IndexAny(word, "-+"); i >= 0 {
		word = word[:i]
	}
	parts := strings.Split(word, ".")
	var n [3]int
	if len(parts) != 3 {
		return Release{}, fmt.Errorf("%q is not a Claude Code version (want major.minor.patch, as `claude --version` prints)", clipText(s))
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || p[0] == '+' {
			return Release{}, fmt.Errorf("%q is not a Claude Code version (want major.minor.patch, as `claude --version` prints)", clipText(s))
		}
		n[i] = v
	}
	return Release{n[0], n[1], n[2]}, nil
}

// MinimumVersion is MinVersion as a Release (a test keeps the two equal).
func MinimumVersion() Release { return Release{2, 1, 295} }

// versionTimeout bounds `claude --version`: it prints a constant and
// exits, in well under a second.
const versionTimeout = 20 * time.Second

// versionOutputMax bounds what is read of its output.
const versionOutputMax = 4 << 10

// InstalledVersion runs `<claude> --version` (bounded in time and output)
// and parses what it prints.
func InstalledVersion(ctx context.Context, claude string) (Release, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	bound := versionTimeout // or the caller's, when shorter (doctor's)
	if d, ok := ctx.Deadline(); ok {
		bound = min(bound, time.Until(d).Round(100*time.Millisecond))
	}
	cmd := exec.CommandContext(ctx, claude, "--version")
	cmd.WaitDelay = time.Second // a child holding the pipe open does not hold us
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Release{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limited{&stderr, versionOutputMax}
	if err := cmd.Start(); err != nil {
		return Release{}, fmt.Errorf("run `%s --version`: %w", claude, err)
	}
	data, _ := io.ReadAll(io.LimitReader(out, versionOutputMax))
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return Release{}, fmt.Errorf("`%s --version` did not answer within %s", claude, bound)
	}
	if werr != nil {
		why := strings.TrimSpace(stderr.String())
		if why != "" {
			why = ": " + clipText(why)
		}
		return Release{}, fmt.Errorf("`%s --version` failed (%v)%s", claude, werr, why)
	}
	// The version is on the first line that has one (a wrapper may print
	// notes before it).
	var first error
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := ParseVersion(line)
		if err == nil {
			return v, nil
		}
		first = cmpErr(first, err)
	}
	if first == nil {
		first = errors.New("it printed nothing")
	}
	return Release{}, fmt.Errorf("`%s --version`: %w", claude, first)
}

// CheckVersion refuses a Claude Code older than MinVersion, or one whose
// version cannot be told, with what to do.
func CheckVersion(ctx context.Context, claude string) (Release, error) {
	v, err := InstalledVersion(ctx, claude)
	if err != nil {
		return v, fmt.Errorf("cannot tell which Claude Code %s is: %w; saga-lsp needs Claude Code %s or newer", claude, err, MinVersion)
	}
	if v.Less(MinimumVersion()) {
		return v, fmt.Errorf("Claude Code %s (%s) is older than %s, the oldest saga-lsp runs stories with: before it, a hook that crashes or hangs lets the agent's write through. Update it (`claude update`, or `npm install -g %s@latest`)", v, claude, MinVersion, NPMPackage)
	}
	return v, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// clipText keeps an error's quote of program output short.
func clipText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
