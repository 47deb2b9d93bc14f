package runs

import (
	"flag"
	"io"
)

func newTestFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
