// Package workspace loads .saga workspaces for tests and benchmarks through
// the real parser (store.NewParser), failing the test on an error. It is a
// package of its own because it imports store, which the test kit does not.
package workspace

import (
	"testing"

	"github.com/saga-ai/saga-lsp/store"
)

// Load compiles the schemas and loads the workspace at root.
func Load(tb testing.TB, root string) *store.Workspace {
	tb.Helper()
	ws, err := Parser(tb).Load(root)
	if err != nil {
		tb.Fatal(err)
	}
	return ws
}

// Story compiles the schemas and loads the story id of the workspace at
// root.
func Story(tb testing.TB, root, id string) *store.Story {
	tb.Helper()
	s, err := Parser(tb).LoadStory(root, id)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Parser compiles the schemas.
func Parser(tb testing.TB) *store.Parser {
	tb.Helper()
	p, err := store.NewParser()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
