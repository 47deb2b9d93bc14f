package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// The session dir holds what runs write for the programs that follow them:
// output and events files, the checks a worker read for its hook, the
// hooks' shared check results. What `stop` signals, what the gate runs and
// what status says are read there, so it must be the user's alone
// (docs/security.md, "Processes and locks").

const (
	// sessionTempDir is where the default session dir lies: the system's
	// temp dir as every process of the user finds it. Not $TMPDIR, which
	// differs between a desktop session, a shell, sudo and Claude Code's
	// sandbox, nor $XDG_RUNTIME_DIR, absent in ssh and sudo shells: the
	// CLI, the language server, the hook and the workers must agree.
	sessionTempDir   = "/tmp"
	sessionDirPrefix = "saga-sessions-"
	// legacySessionDirName is the default of earlier versions,
	// /tmp/saga-sessions, one folder shared by every user.
	legacySessionDirName = "saga-sessions"
)

// ErrUnsafeSessionDir is wrapped by the refusal of a session dir another
// user could read or write.
var ErrUnsafeSessionDir = errors.New("unsafe session folder")

// SessionDir is $SAGA_SESSION_DIR (made absolute), else DefaultSessionDir.
// It is only the path: MakeSessionDir creates it, CheckSessionDir says
// whether it may be used.
func SessionDir(env func(string) string) string {
	d := Getenv(env, EnvSessionDir)
	if d == "" {
		return DefaultSessionDir()
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// CheckSessionDir refuses a session dir that is not the user's alone: it
// must be a folder (not a symbolic link) owned by the user that no one else
// can write. One that others can only read (as earlier versions made
// $SAGA_SESSION_DIR: 0755) is made 0700 first — nothing in it can have been
// planted. A missing one passes: nothing was written there yet.
func CheckSessionDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session folder %s: %w", dir, err)
	}
	if err := ownedPrivate(dir); err != nil {
		return fmt.Errorf("%w: %v; or set %s to a folder of yours with mode 0700", ErrUnsafeSessionDir, err, EnvSessionDir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("session folder %s: make it private (mode 0700): %w", dir, err)
		}
	}
	return nil
}

// MakeSessionDir creates the session dir with mode 0700 when it is missing,
// and refuses one CheckSessionDir refuses.
func MakeSessionDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create the session folder %s: %w (set %s to a writable folder)", dir, err, EnvSessionDir)
	}
	switch err := os.Mkdir(dir, 0o700); {
	case err == nil:
		// The umask may have taken more than group and other bits.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("create the session folder %s: %w", dir, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create the session folder %s: %w (set %s to a writable folder)", dir, err, EnvSessionDir)
	}
	return CheckSessionDir(dir)
}

// LegacySessionDir is, when dir is a default session dir, the default of
// earlier versions beside it (/tmp/saga-sessions); "" otherwise. Runs
// started before the upgrade are still listed from there while it is safe
// to read (legacyUsable), until `saga-lsp clean` has removed them.
func LegacySessionDir(dir string) string {
	if filepath.Base(dir) != sessionDirPrefix+strconv.Itoa(os.Geteuid()) {
		return ""
	}
	return filepath.Join(filepath.Dir(dir), legacySessionDirName)
}

// legacyUsable tells whether the old shared default may be read: a folder
// owned by the user that no one else can write (as the old versions made
// it); one another user made is never read.
func legacyUsable(dir string) bool { return ownedPrivate(dir) == nil }

// readDirs are the folders runs are listed from: the session dir when it
// passes CheckSessionDir, and its legacy sibling when usable.
func readDirs(dir string) []string {
	var out []string
	if CheckSessionDir(dir) == nil {
		out = append(out, dir)
	}
	if l := LegacySessionDir(dir); l != "" && legacyUsable(l) {
		out = append(out, l)
	}
	return out
}
