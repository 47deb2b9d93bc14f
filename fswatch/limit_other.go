//go:build !unix

package fswatch

// isLimit: Windows watches folders with ReadDirectoryChangesW, which has no
// per-user limit of watches.
func isLimit(error) bool { return false }
