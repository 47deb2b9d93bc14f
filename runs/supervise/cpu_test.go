//go:build unix

package supervise_test

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"testing"

	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// hashWork is CPU work that takes tens of milliseconds anywhere.
func hashWork() {
	buf := make([]byte, 32<<20)
	for range 2 {
		sha256.Sum256(buf)
	}
}

// TestMain makes the test binary its own CPU-bound child
// (SUPERVISE_TEST_CHILD=hash).
func TestMain(m *testing.M) {
	if os.Getenv("SUPERVISE_TEST_CHILD") == "hash" {
		hashWork()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCPUUsed: what this process computes counts, and so does what a
// child it waited for computed — a loop's pass is its git processes too.
func TestCPUUsed(t *testing.T) {
	before := supervise.CPUUsed()
	if before <= 0 {
		t.Fatalf("CPUUsed = %v at the start of a test: not read", before)
	}
	hashWork()
	own := supervise.CPUUsed() - before
	if own <= 0 {
		t.Fatalf("hashing 64 MB added %v of CPU", own)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SUPERVISE_TEST_CHILD=hash")
	at := supervise.CPUUsed()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	grew := supervise.CPUUsed() - at
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if child <= 0 || grew < child {
		t.Fatalf("a child that used %v of CPU added %v to CPUUsed", child, grew)
	}
	t.Logf("own work %v; the child's %v, counted %v", own, child, grew)
}
