package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/store"
)

// listPrefix and listSep frame a SAGA list id: saga__<story>__<unixMillis>.
// A canonical story name never contains "__", so the id splits unambiguously.
const (
	listPrefix = "saga__"
	listSep    = "__"
)

// ConfigDir returns Claude Code's configuration directory, looking
// variables up with env (os.Getenv when nil): $CLAUDE_CONFIG_DIR when set
// and non-empty (as ${CLAUDE_CONFIG_DIR:-…}), else $HOME/.claude. A relative
// $CLAUDE_CONFIG_DIR is made absolute against the current directory; a
// claude process started elsewhere would resolve it against its own, so pass
// it an absolute value.
func ConfigDir(env func(string) string) (string, error) {
	if env == nil {
		env = os.Getenv
	}
	if d := env(EnvConfigDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("claude config dir %q: %w", d, err)
		}
		return abs, nil
	}
	home := env("HOME")
	if home == "" {
		return "", fmt.Errorf("claude config dir: $HOME is not set (set %s or HOME)", EnvConfigDir)
	}
	return filepath.Join(home, ".claude"), nil
}

// Sanitize turns a list or task id into the name Claude Code uses on disk:
// every character outside [a-zA-Z0-9_-] becomes '-'. Like the JavaScript
// regular expression it mirrors, it works on UTF-16 code units, so a
// character outside the Basic Multilingual Plane (an emoji) becomes "--";
// each byte that is not UTF-8 becomes one '-'.
func Sanitize(id string) string {
	clean := true
	for i := 0; i < len(id); i++ {
		if !safeByte(id[i]) {
			clean = false
			break
		}
	}
	if clean {
		return id
	}
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); {
		c := id[i]
		if c < utf8.RuneSelf {
			if safeByte(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('-')
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(id[i:])
		b.WriteByte('-')
		if r > 0xFFFF {
			b.WriteByte('-') // a surrogate pair in JavaScript
		}
		i += size
	}
	return b.String()
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ListDir is the directory of a task list: <configDir>/tasks/<Sanitize(listID)>.
func ListDir(configDir, listID string) string {
	return filepath.Join(configDir, "tasks", Sanitize(listID))
}

// ListID names the task list of one run of a story: "saga__<story>__<ms>".
func ListID(story string, unixMillis int64) string {
	return listPrefix + story + listSep + strconv.FormatInt(unixMillis, 10)
}

// StoryOfList is ListID's inverse: the story of a "saga__<story>__<ms>" list
// id. ok is false unless the story is a valid canonical name and <ms> a
// non-negative decimal int64 without sign.
func StoryOfList(listID string) (story string, ok bool) {
	rest, ok := strings.CutPrefix(listID, listPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, listSep)
	if i < 0 {
		return "", false
	}
	story, ms := rest[:i], rest[i+len(listSep):]
	if ms == "" || ms[0] < '0' || ms[0] > '9' {
		return "", false
	}
	if _, err := strconv.ParseInt(ms, 10, 64); err != nil {
		return "", false
	}
	if !store.ValidCanonical(story) {
		return "", false
	}
	return story, true
}

// IsSagaList tells whether a list id claims to be a SAGA story's (starts
// with "saga__"), valid or not.
func IsSagaList(listID string) bool { return strings.HasPrefix(listID, listPrefix) }
