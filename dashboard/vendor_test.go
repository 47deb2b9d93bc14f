package dashboard_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestVendoredAssets: the committed assets/vendor is what `go generate`
// makes from assets/npm's lock file today (npm ci from the registry). It
// needs npm and the network: with SAGA_DASHBOARD_VENDOR_TEST=1 (.ci/run
// sets it) it runs, otherwise it is skipped.
func TestVendoredAssets(t *testing.T) {
	if os.Getenv("SAGA_DASHBOARD_VENDOR_TEST") != "1" {
		testkit.Needs(t, "set SAGA_DASHBOARD_VENDOR_TEST=1 to vendor the libraries again (npm ci) and compare")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not installed")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "vendor_gen.go", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run vendor_gen.go: %v\n%s", err, b)
	}
	for _, f := range []string{"dagre.min.js", "LICENSE.dagre.txt", "morphdom.min.js", "LICENSE.morphdom.txt"} {
		fresh, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("assets", "vendor", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("assets/vendor/%s differs from a fresh vendoring (%d bytes, committed %d): run go generate ./dashboard", f, len(fresh), len(committed))
		}
	}
}
