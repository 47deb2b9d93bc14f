package verify

import (
	"os"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The package runs git with the test process's environment: keep it from
// the user's and the system's configuration (init.defaultBranch would
// change DefaultBranch) and from GIT_* variables a git hook running the
// tests sets (GIT_DIR would send git elsewhere).
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			os.Unsetenv(k)
		}
	}
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	testkit.Main(m)
}
