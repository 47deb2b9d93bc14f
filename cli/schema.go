package cli

import (
	"cmp"
	"fmt"

	"github.com/saga-ai/saga-lsp/store/schema"
)

const schemaSynopsis = "schema story|epic|task"

func runSchema(env *Env, args []string) int {
	c := newCmdLine("schema")
	pos, err := c.parse(args)
	var kinds []string
	for _, k := range schema.Kinds {
		kinds = append(kinds, string(k))
	}
	if err == nil && len(pos) > 0 {
		err = oneOf("kind", pos[0], kinds...)
	}
	if err := cmp.Or(err, wantArgs(pos, "story|epic|task")); err != nil {
		return c.fail(env, err)
	}
	src, err := schema.Source(schema.Kind(pos[0]))
	if err != nil {
		return c.fail(env, err)
	}
	fmt.Fprintf(env.Stdout, "%s", src)
	return exitOK
}
