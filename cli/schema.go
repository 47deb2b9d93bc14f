package cli

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/store/schema"
)

func runSchema(env *Env, args []string) int {
	fs := newFlagSet(env, "schema", "schema story|epic|task")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	src, err := schema.Source(schema.Kind(pos[0]))
	if err != nil {
		return fail(env, err)
	}
	fmt.Fprintf(env.Stdout, "%s", src)
	return exitOK
}
