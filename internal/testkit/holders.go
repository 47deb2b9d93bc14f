package testkit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Holders runs workers goroutines that each take a lock rounds times, hold
// it for hold and release it, and returns the most holders seen at once and
// how many critical sections ran (1 and workers×rounds for a lock that
// excludes). acquire takes the lock and returns its release; an error of
// either fails the test.
func Holders(tb testing.TB, workers, rounds int, hold time.Duration, acquire func() (release func() error, err error)) (most, sections int) {
	tb.Helper()
	var inside, maxInside, count atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				release, err := acquire()
				if err != nil {
					tb.Error(err)
					return
				}
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				time.Sleep(hold)
				inside.Add(-1)
				count.Add(1)
				if err := release(); err != nil {
					tb.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return int(maxInside.Load()), int(count.Load())
}
