//go:build unix && !portable

package store

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// list reads the names in the folder dir into l.names, sorted.
func (l *loader) list(dir filesafe.Folder) error {
	if l.dirBuf == nil {
		l.dirBuf = make([]byte, 8192)
	}
	l.names = l.names[:0]
	for {
		n, err := filesafe.IgnoringEINTR(func() (int, error) { return unix.ReadDirent(dir, l.dirBuf) })
		if err != nil {
			return err
		}
		if n <= 0 {
			break
		}
		_, _, l.names = unix.ParseDirent(l.dirBuf[:n], -1, l.names)
	}
	slices.Sort(l.names)
	return nil
}
