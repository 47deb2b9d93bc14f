package review

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The checks that test a length apart from the characters say what the
// bounded patterns they replace said, at and around every bound.
func TestPatternsAgreeWithBoundedRegexps(t *testing.T) {
	cases := []struct {
		name    string
		check   func(string) bool
		bounded *regexp.Regexp
		alpha   string
	}{
		{"markerToken", markerToken, regexp.MustCompile(`^[A-Za-z0-9._:+-]{1,100}$`), "aZ9._:+-> \n"},
		{"commitHex", commitHex, regexp.MustCompile(`^[0-9a-f]{7,64}$`), "0af9Ag \n"},
		{"repoPart", repoPart, regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`), "aZ9_.-/ \n"},
		{"validLogin", validLogin, regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`), "aZ9-_ \n"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		for n := 0; n <= 110; n++ {
			// Valid characters only (the length decides), then any of the alphabet.
			for _, alpha := range []string{c.alpha[:3], c.alpha} {
				for range 20 {
					var b strings.Builder
					for range n {
						b.WriteByte(alpha[rng.IntN(len(alpha))])
					}
					s := b.String()
					if got, want := c.check(s), c.bounded.MatchString(s); got != want {
						t.Errorf("%s(%q) = %v, the bounded pattern says %v", c.name, s, got, want)
					}
				}
			}
		}
	}
}
