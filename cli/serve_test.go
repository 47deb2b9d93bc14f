package cli

import "testing"

// TestGCPercentAfterLoad: the collector's room after the load is what the
// memory budget (3.8 × the JSON bytes of Go memory) leaves above what the
// runtime uses, at least 16 MB, as a GOGC between 10 and 50.
func TestGCPercentAfterLoad(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name                  string
		srcBytes, live, inUse uint64
		want                  int
	}{
		{"a small workspace: the runtime is most of it, 16 MB of room", 50 << 10, 4 * mb, 8 * mb, 50},
		{"W: 16 MB of room over 59 MB", 17 * mb, 59 * mb, 66 * mb, 27},
		{"4W: under the budget's 10%, the floor", 71 * mb, 195 * mb, 205 * mb, 10},
		{"a heap well under its budget: the load's GOGC", 100 * mb, 150 * mb, 160 * mb, 50},
		{"between the bounds", 100 * mb, 200 * mb, 210 * mb, 40},
		{"over the budget already: the floor, never below the live heap", 10 * mb, 300 * mb, 320 * mb, 10},
		{"nothing live", 0, 0, 2 * mb, 50},
	} {
		if got := gcPercentAfterLoad(c.srcBytes, c.live, c.inUse); got != c.want {
			t.Errorf("%s: GOGC %d, want %d", c.name, got, c.want)
		}
	}
}
