package runs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// The hook program is saga-lsp-hook only beside saga-lsp, executable and
// from the same build; else saga-lsp itself (docs/hooks.md#the-hook-program).
func TestHookProgram(t *testing.T) {
	bin := testkit.Binary(t)
	companion := filepath.Join(filepath.Dir(bin), runs.HookBinary)
	if got := runs.HookProgram(bin); got != companion {
		t.Errorf("beside its own saga-lsp-hook: %s, want %s", got, companion)
	}
	// And back: the hook's checks run saga-lsp's subcommands.
	if got := runs.SagaLSPOf(companion); got != bin {
		t.Errorf("SagaLSPOf(its saga-lsp-hook) = %s, want %s", got, bin)
	}
	if got := runs.SagaLSPOf(bin); got != bin {
		t.Errorf("SagaLSPOf(saga-lsp) = %s, want itself", got)
	}
	copyTo := func(dir, src, name string, mode os.FileMode) string {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}

	alone := copyTo(t.TempDir(), bin, "saga-lsp", 0o755)
	if got := runs.HookProgram(alone); got != alone {
		t.Errorf("alone: %s, want saga-lsp itself", got)
	}

	dir := t.TempDir()
	self := copyTo(dir, bin, "saga-lsp", 0o755)
	copyTo(dir, companion, runs.HookBinary, 0o644)
	if got := runs.HookProgram(self); got != self {
		t.Errorf("beside a saga-lsp-hook that is not executable: %s, want saga-lsp itself", got)
	}

	// Another build: the same sources with another version stamp.
	other := t.TempDir()
	self = copyTo(other, bin, "saga-lsp", 0o755)
	build := exec.Command("go", "build", "-ldflags", "-X github.com/saga-ai/saga-lsp/cli.Version=v0.0.1-other", "-o", filepath.Join(other, runs.HookBinary), "./cmd/saga-lsp-hook")
	build.Dir = testkit.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if got := runs.HookProgram(self); got != self {
		t.Errorf("beside a saga-lsp-hook of another build: %s, want saga-lsp itself", got)
	}
	if hook := filepath.Join(other, runs.HookBinary); runs.SagaLSPOf(hook) != hook {
		t.Errorf("a saga-lsp-hook of another build took the saga-lsp beside it for its own")
	}
}
