package filesafe

import "time"

// A stamp tells a later look at a file or folder that it is unchanged
// without reading it (store.Kept, runs.Records.Stamp). The kernel stamps
// with a coarse clock (a few ms on Linux) and some file systems only by
// the second or two, so a write right after a look can keep the time the
// look saw — racily equal, as git calls an index entry stamped in the
// second it was read. A stamp is trusted only once its times are older
// than that: Settled.

// settle is how long after its last change a stamp is trusted.
const settle = 100 * time.Millisecond

// Settled reports whether something last changed at changed can be told
// unchanged by its stamp at now: settle after it, two seconds where the
// time has no sub-second part (a file system stamping by the second).
func Settled(now, changed time.Time) bool {
	d := settle
	if changed.Nanosecond() == 0 {
		d = 2 * time.Second
	}
	return now.Sub(changed) >= d
}
