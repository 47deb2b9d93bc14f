//go:build !linux || portable

package filesafe

import "os"

// replaceNoFlush: elsewhere an atomic write without fsync is a plain rename
// (done false).
func replaceNoFlush(dir *os.File, tmp, base string) (done bool, err error) { return false, nil }
