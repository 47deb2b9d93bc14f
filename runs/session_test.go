package runs

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseSessionName(t *testing.T) {
	for _, c := range []struct {
		name  string
		story string
		ms    int64
		ok    bool
	}{
		{"saga-story-add-logout-button-1707000123456", "add-logout-button", 1707000123456, true},
		{"saga-story-user-auth--setup-db-1707000123456", "user-auth--setup-db", 1707000123456, true},
		{"saga-story-a-1-5", "a-1", 5, true},
		{"saga-story-a-", "", 0, false},
		{"saga-story--1", "", 0, false},
		{"saga-story-a-+1", "", 0, false},
		{"saga-story-Bad-1", "", 0, false},
		{"other-a-1", "", 0, false},
	} {
		s, ms, ok := ParseSessionName(c.name)
		if s != c.story || ms != c.ms || ok != c.ok {
			t.Errorf("ParseSessionName(%q) = %q, %d, %v; want %q, %d, %v", c.name, s, ms, ok, c.story, c.ms, c.ok)
		}
	}
	name := KindSessionName(KindStory, "user-auth--api", time.UnixMilli(1707000123456))
	if s, ms, ok := ParseSessionName(name); name != "saga-story-user-auth--api-1707000123456" || s != "user-auth--api" || ms != 1707000123456 || !ok {
		t.Errorf("KindSessionName round trip: %q → %q %d %v", name, s, ms, ok)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/bin/saga-lsp": "/usr/local/bin/saga-lsp",
		"/opt/my tools/saga-lsp":  "'/opt/my tools/saga-lsp'",
		"/it's/saga-lsp":          `'/it'\''s/saga-lsp'`,
		"":                        "''",
		"$HOME/x":                 "'$HOME/x'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
		if words, ok := shellSplit(ShellQuote(in)); !ok || len(words) != 1 || words[0] != in {
			t.Errorf("sh does not read ShellQuote(%q) back: %q", in, words)
		}
	}
}

// shellSplit asks sh how it splits a command line.
func shellSplit(line string) ([]string, bool) {
	out, err := exec.Command("sh", "-c", `for a in `+line+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		return nil, false
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), true
}
