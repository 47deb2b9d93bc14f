package doctor

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// What gh's `auth status` says, as Debian's gh 2.23 and the stand-in say
// it: logged out is a fact gh knows offline; a refused token may be the
// network's doing, and says so; a timeout is not checked.
func TestGHLogin(t *testing.T) {
	exit1 := errors.New("exit status 1")
	for _, c := range []struct {
		name  string
		text  string
		err   error
		level Level
		has   string
	}{
		{"logged out (gh 2.23)", "You are not logged into any GitHub hosts. Run gh auth login to authenticate.\n", exit1, Warning, "gh is not logged in to GitHub"},
		{"logged out (stand-in)", "You are not logged into any GitHub hosts. To log in, run: gh auth login\n", exit1, Warning, "gh is not logged in to GitHub"},
		{"token refused or offline (gh 2.23 offline)", "github.com\n  X github.com: authentication failed\n  - The github.com token in GH_TOKEN is no longer valid.\n", exit1, Warning, "refused, or GitHub could not be reached (offline?)"},
		{"old gh: a refused token with exit 0", "github.com\n  X Failed to log in to github.com account a (/h/.config/gh/hosts.yml)\n  - The token in /h/.config/gh/hosts.yml is invalid.\n  - To re-authenticate, run: gh auth login -h github.com\n", nil, Warning, "The token in /h/.config/gh/hosts.yml is invalid."},
		{"no network", "error connecting to api.example\ncheck your internet connection\n", exit1, Unchecked, "not checked: gh cannot reach GitHub"},
		{"timeout", "", fmt.Errorf("%w after 5s", errTimeout), Unchecked, "did not answer (timed out after 5s; offline?)"},
		{"logged in", "github.com\n  ✓ Logged in to github.com account saga-standin (GH_TOKEN)\n  - Token: gho_****\n", nil, OK, "logged in to github.com account saga-standin (GH_TOKEN)"},
	} {
		got := ghLogin(c.text, c.err, Warning, "")
		if got.Level != c.level || !strings.Contains(got.Detail, c.has) || (c.level != OK && got.Fix == "") {
			t.Errorf("%s: %+v, want %s with %q and a fix", c.name, got, c.level, c.has)
		}
		if strings.Contains(got.Detail, "gho_") {
			t.Errorf("%s: the token shows: %s", c.name, got.Detail)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]version{
		"git version 2.39.5":                 {2, 39, 5},
		"git version 2.45.1.windows.1":       {2, 45, 1},
		"git version 2.39.3 (Apple Git-146)": {2, 39, 3},
	} {
		if got, ok := parseVersion(in); !ok || got != want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	if _, ok := parseVersion("command not found"); ok {
		t.Error("a version read from no version")
	}
	if !(version{2, 37, 9}).less(MinGit) || (version{2, 38, 0}).less(MinGit) || (version{3, 0, 0}).less(MinGit) {
		t.Error("MinGit compares wrong")
	}
}

// A remote's password or token is never shown.
func TestRedact(t *testing.T) {
	if got := redact("https://me:ghp_secret@git.example/o/r.git"); strings.Contains(got, "ghp_secret") || !strings.Contains(got, "git.example/o/r.git") {
		t.Errorf("redact: %s", got)
	}
	if got := redact("git@git.example:o/r.git"); got != "git@git.example:o/r.git" {
		t.Errorf("redact of an scp-like address: %s", got)
	}
}
