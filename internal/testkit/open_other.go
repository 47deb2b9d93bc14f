//go:build !linux

package testkit

import "testing"

// Opened needs inotify: elsewhere the test is skipped.
func Opened(tb testing.TB, path string) <-chan struct{} {
	tb.Helper()
	tb.Skip("not Linux: seeing a file opened needs Linux's inotify")
	return nil
}
