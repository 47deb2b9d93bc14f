package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Release{
		"2.1.330 (Claude Code)\n": {2, 1, 330},
		"2.1.295":                 {2, 1, 295},
		"v3.0.0-beta.1 (x)":       {3, 0, 0},
		"10.20.30+build":          {10, 20, 30},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Claude Code", "2.1", "2.1.x", "2.1.3.4", "2.-1.3", "2..3", "2.+1.3"} {
		if v, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %v, want an error", in, v)
		}
	}
	if MinimumVersion().String() != MinVersion {
		t.Errorf("MinimumVersion() = %v, MinVersion = %s", MinimumVersion(), MinVersion)
	}
	for _, c := range []struct {
		a, b Release
		less bool
	}{{Release{2, 1, 294}, Release{2, 1, 295}, true}, {Release{2, 1, 295}, Release{2, 1, 295}, false},
		{Release{2, 0, 999}, Release{2, 1, 0}, true}, {Release{1, 9, 9}, Release{2, 0, 0}, true}, {Release{3, 0, 0}, Release{2, 9, 9}, false}} {
		if c.a.Less(c.b) != c.less {
			t.Errorf("%v.Less(%v) = %v", c.a, c.b, !c.less)
		}
	}
}

// CheckVersion runs the program: an older Claude Code is refused naming
// both versions and how to update; one that prints no version, fails or
// hangs is refused too (never taken for a new enough one).
func TestCheckVersion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-ins are shell scripts")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	if v, err := CheckVersion(ctx, script("new", `echo "2.1.330 (Claude Code)"`)); err != nil || v != (Release{2, 1, 330}) {
		t.Errorf("2.1.330: %v, %v", v, err)
	}
	if _, err := CheckVersion(ctx, script("exact", `echo "note: updating"; echo "2.1.295 (Claude Code)"`)); err != nil {
		t.Errorf("2.1.295 after a note: %v", err)
	}
	old := script("old", `echo "2.1.294 (Claude Code)"`)
	_, err := CheckVersion(ctx, old)
	if err == nil || !strings.Contains(err.Error(), "Claude Code 2.1.294 ("+old+") is older than 2.1.295") || !strings.Contains(err.Error(), "claude update") {
		t.Errorf("2.1.294: %v", err)
	}
	for name, body := range map[string]string{"garbage": "echo hello", "silent": "exit 0", "failing": "echo boom >&2; exit 3"} {
		_, err := CheckVersion(ctx, script(name, body))
		if err == nil || !strings.Contains(err.Error(), "cannot tell which Claude Code") || !strings.Contains(err.Error(), "needs Claude Code 2.1.295 or newer") {
			t.Errorf("%s: %v", name, err)
		}
		if name == "failing" && (err == nil || !strings.Contains(err.Error(), "boom")) {
			t.Errorf("failing: its stderr is not quoted: %v", err)
		}
	}
	if _, err := CheckVersion(ctx, filepath.Join(dir, "absent")); err == nil {
		t.Errorf("an absent program was accepted")
	}
	// A hang is cut by the context (the bound inside is 20 s; a caller's
	// shorter context wins).
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := CheckVersion(cctx, script("hang", "exec sleep 600")); err == nil {
		t.Errorf("a hanging --version was accepted")
	}
}
