//go:build unix

// Package vscode_test runs the VS Code extension's real-editor test
// (test/run.sh: package the .vsix, run it in code-server in headless
// Chromium) as part of `go test ./...`. It installs Node 24, code-server and
// playwright-core from the npm registry on first use (about 3 minutes;
// cached in editors/vscode/.cache), so it only runs when SAGA_VSCODE_TEST=1 —
// .ci/run sets it.
package vscode_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestVSCodeExtension(t *testing.T) {
	if os.Getenv("SAGA_VSCODE_TEST") != "1" {
		testkit.Needs(t, "set SAGA_VSCODE_TEST=1 to run the VS Code extension in code-server (needs chromium, libkrb5-dev, and the npm registry; see editors/vscode/test/run.sh)")
	}
	// Beside TestREADMERecipe (its own copy of the repository): the one
	// compiles and runs npm ci while the other waits on code-server.
	t.Parallel()
	for _, tool := range []string{"bash", "npm", "tmux", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("SAGA_VSCODE_TEST=1 but %s is not installed", tool)
		}
	}
	// Stop the script a little before go test's own deadline, so that its
	// output (and code-server's clean-up) is not lost to a panic.
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-20*time.Second))
		defer cancel()
	}
	script, err := filepath.Abs(filepath.Join("test", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = os.Environ()
	// On timeout, SIGTERM to the script's process group (node, code-server,
	// Chromium); run.sh's trap then stops its private tmux server.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	err = cmd.Run()
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if err != nil {
		// The failure first: CI keeps the head and the tail of a long
		// output, and the steps that passed would push it out of both.
		failed := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "[e2e") && strings.Contains(l, "] ✗ ") })
		if failed > 0 {
			lines = slices.Concat(lines[failed:], []string{"the run before the failure:"}, lines[:failed])
		}
	}
	for _, line := range lines {
		if err != nil || strings.HasPrefix(line, "[run.sh") || strings.HasPrefix(line, "[e2e") {
			t.Log(line)
		}
	}
	if err != nil {
		t.Fatalf("test/run.sh failed after %s: %v (screenshots and logs: editors/vscode/test/artifacts)", time.Since(start).Round(time.Second), err)
	}
	t.Logf("test/run.sh passed in %s", time.Since(start).Round(time.Second))
}
