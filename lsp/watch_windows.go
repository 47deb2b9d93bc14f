package lsp

// isWatchLimit: Windows watches folders with ReadDirectoryChangesW, which
// has no per-user limit of watches.
func isWatchLimit(error) bool { return false }
