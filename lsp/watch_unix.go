//go:build unix

package lsp

import (
	"errors"
	"syscall"
)

// isWatchLimit: err is inotify's "no space": the user's limit of watches
// (fs.inotify.max_user_watches) is reached.
func isWatchLimit(err error) bool { return errors.Is(err, syscall.ENOSPC) }
