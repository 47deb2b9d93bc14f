package store

import (
	"math/rand/v2"
	"testing"
)

// TestEditDistanceBounded: below the limit the distance is exact; at or
// over it, the answer is at least the limit (what suggest and
// nearestProperty rely on) — for editDistance and distances alike.
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
		b := make([]byte, r.IntN(70)) // past 64 bytes too: the fallback
		for i := range b {
			b[i] = "abc-"[r.IntN(4)]
		}
		return string(b)
	}
	for range 20000 {
		a, b, limit := word(), word(), 1+r.IntN(6)
		want := full(a, b)
		for name, got := range map[string]int{"editDistance": editDistance(a, b, limit), "distances.to": newDistances(a).to(b, limit)} {
			if (want < limit && got != want) || (want >= limit && got < limit) {
				t.Fatalf("seed %d: %s(%q, %q, %d) = %d, distance is %d", seed, name, a, b, limit, got, want)
			}
		}
	}
}
