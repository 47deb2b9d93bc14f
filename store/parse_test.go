package store

import (
	"math/rand/v2"
	"testing"
)

// TestEditDistanceBounded: below the limit the distance is exact; at or
// over it, the answer is at least the limit (what suggest and
// nearestProperty rely on).
func TestEditDistanceBounded(t *testing.T) {
	full := func(a, b string) int {
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			}
		}
		return d[len(a)][len(b)]
	}
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 0))
	word := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = "abc-"[r.IntN(4)]
		}
		return string(b)
	}
	for range 20000 {
		a, b, limit := word(), word(), 1+r.IntN(6)
		want, got := full(a, b), editDistance(a, b, limit)
		if (want < limit && got != want) || (want >= limit && got < limit) {
			t.Fatalf("seed %d: editDistance(%q, %q, %d) = %d, distance is %d", seed, a, b, limit, got, want)
		}
	}
}
