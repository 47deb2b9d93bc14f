package testkit_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunHelper(map[string]func([]string) error{
		// echo prints "ready", then its arguments, and ends when stdin closes.
		"echo": func(args []string) error {
			fmt.Println("ready")
			fmt.Println(strings.Join(args, " "))
			_, err := io.Copy(io.Discard, os.Stdin)
			return err
		},
		"fail": func([]string) error { return errors.New("on purpose") },
	})
	testkit.Main(m)
}

func TestHelperProcesses(t *testing.T) {
	cmd := testkit.HelperCmd("echo", "a", "b c")
	stdin, _, err := testkit.StartHelper(cmd, "ready")
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("echo: %v", err)
	}
	cmd = testkit.HelperCmd("fail")
	if _, _, err := testkit.StartHelper(cmd, "ready"); err == nil || !strings.Contains(err.Error(), "helper fail: on purpose") {
		t.Errorf("a failing helper: %v", err)
	}
	cmd = testkit.HelperCmd("nope")
	if _, _, err := testkit.StartHelper(cmd, "ready"); err == nil || !strings.Contains(err.Error(), `unknown helper "nope"`) {
		t.Errorf("an unknown helper: %v", err)
	}
}

func TestWaitExit(t *testing.T) {
	// A process that is not the test's child: sleep, started in the
	// background by a shell that has exited.
	r := testkit.Run(t, "", nil, "", "sh", "-c", "sleep 0.2 >/dev/null 2>&1 & echo $!")
	pid, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("sh: %q %v", r.Stdout, err)
	}
	if !testkit.WaitExit(pid, 10*time.Second) {
		t.Errorf("sleep %d did not end", pid)
	}
	if !testkit.WaitExit(0, 0) {
		t.Error("no process is an ended one")
	}
}

func TestOpened(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := testkit.Opened(t, path)
	select {
	case <-opened:
		t.Fatal("seen opened before anyone opened it")
	default:
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	<-opened
}

func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "d", "run"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := testkit.CopyTree(t, src)
	fi, err := os.Stat(filepath.Join(dst, "d", "run"))
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("copy: %v, mode %v (want executable)", err, fi)
	}
	if real, _ := filepath.EvalSymlinks(dst); real != dst {
		t.Errorf("CopyTree returned %s, not its real path %s", dst, real)
	}
}
