package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
)

// doctor reads Claude Code's version as the worker does (claudecode), and
// a claude that does not answer is bounded by doctor's own timeout.
func TestClaudeProgramVersion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in claude is a shell script")
	}
	for _, c := range []struct {
		name, script string
		level        Level
		has          string
	}{
		{"new enough", `echo "` + claudecode.MinVersion + ` (Claude Code)"`, OK, "Claude Code " + claudecode.MinVersion},
		{"too old", `echo "2.1.200 (Claude Code)"`, Error, "is too old: " + claudecode.MinVersion + " or later"},
		{"a note before the version", "echo 'update available' >&2\necho 'note: hello'\necho '2.2.0 (Claude Code)'", OK, "Claude Code 2.2.0"},
		{"no version", `echo "command not found"`, Warning, "did not tell its version"},
		{"hangs", "exec sleep 60", Warning, "did not answer within 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			claude := filepath.Join(dir, "claude")
			if err := os.WriteFile(claude, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := func(k string) string {
				if k == runs.EnvClaude {
					return claude
				}
				return os.Getenv(k)
			}
			chk := checker{o: Options{Env: env, Timeout: time.Second}}
			got := chk.claudeProgram(context.Background())
			if len(got) != 1 || got[0].Level != c.level || !strings.Contains(got[0].Detail, c.has) {
				t.Fatalf("got %+v, want %s with %q", got, c.level, c.has)
			}
			if c.level != OK && got[0].Fix == "" {
				t.Errorf("no fix: %+v", got[0])
			}
		})
	}
}
