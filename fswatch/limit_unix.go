//go:build unix

package fswatch

import (
	"errors"
	"syscall"
)

// isLimit: inotify's "no space" is the user's limit of watches.
func isLimit(err error) bool { return errors.Is(err, syscall.ENOSPC) }
