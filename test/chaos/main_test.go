package chaos_test

import (
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
