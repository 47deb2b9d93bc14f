//go:build !linux

package bench

import "testing"

// storyPageTimes: the dashboard is measured on Linux only (startDashboard
// reads /proc).
func storyPageTimes(b *testing.B, bin, big string, bigEnv []string, small string, smallEnv []string) (bigS, smallS float64, ok bool) {
	return 0, 0, false
}
