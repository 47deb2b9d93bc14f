//go:build !unix || portable

package store

import (
	"os"
	"slices"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// list reads the names in the folder dir into l.names, sorted.
func (l *loader) list(dir filesafe.Folder) error {
	d, err := os.Open(dir)
	if err != nil {
		return filesafe.PathErr(err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return filesafe.PathErr(err)
	}
	l.names = append(l.names[:0], names...)
	slices.Sort(l.names)
	return nil
}
