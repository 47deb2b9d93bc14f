package glob

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		globs []string
		rel   string
		want  bool
	}{
		{[]string{"*.go"}, "a/b/c.go", true},
		{[]string{"api/**"}, "api/x/y.go", true},
		{[]string{"api/"}, "api/x.go", true},
		{[]string{"api/*.go"}, "api/x/y.go", false},
		{[]string{"./docs/*.md"}, "docs/a.md", true},
		{[]string{"api/**/h.go"}, "api/h.go", true},
		{nil, "a", false},
	}
	for _, c := range cases {
		if got := Match(c.globs, c.rel); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.globs, c.rel, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, g := range []string{"api/**", "*.go", "a/[bc]/d", `x\*`, "docs/"} {
		if err := Check(g); err != nil {
			t.Errorf("Check(%q) = %v, want nil", g, err)
		}
	}
	for _, g := range []string{"", "  ", "/etc/x", "a/../b", "a//b", "a/[b", `a\`, "./.."} {
		if err := Check(g); err == nil {
			t.Errorf("Check(%q) = nil, want an error", g)
		}
	}
}

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"api/**", "api/users.go", true},
		{"api/**", "api/", true},
		{"api/**", "web/**", false},
		{"api/*.go", "api/users.go", true},
		{"api/*.go", "api/users.ts", false},
		{"api/*.go", "api/v1/users.go", false},
		{"*.go", "web/x.go", true},  // a name in any folder
		{"*.go", "web/x.ts", false}, // never the same name
		{"README.md", "docs/README.md", true},
		{"api/v*/x", "api/*1/x", true}, // api/v1/x
		{"a/b*c", "a/*d", false},       // one ends in c, the other in d
		{"a/[xy].go", "a/z.go", true},  // classes are not decided: taken to overlap
		{"**", "anything/at/all", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"docs/a.md", "docs/b.md", false},
		{"a/[b", "c", true}, // does not parse: overlaps everything
		{`a/\*`, "a/x", false},
		{`a/\*`, "a/*", true},
	}
	for _, c := range cases {
		if got := Overlap(c.a, c.b); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Overlap(c.b, c.a); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

// TestOverlapAgreesWithMatch: a path both globs match means they overlap.
func TestOverlapAgreesWithMatch(t *testing.T) {
	globs := []string{"*.go", "api/**", "api/*.go", "api/v?/x.go", "**/x.go", "web/", "a*b/c", "ab/c", "x.go", "api/v1/x.go", "docs/*.md"}
	paths := []string{"api/v1/x.go", "x.go", "web/x.go", "ab/c", "aXb/c", "docs/a.md", "api/y.go", "api/v1/y"}
	for _, a := range globs {
		for _, b := range globs {
			for _, p := range paths {
				if Match([]string{a}, p) && Match([]string{b}, p) && !Overlap(a, b) {
					t.Errorf("%q and %q both match %q but Overlap says no", a, b, p)
				}
			}
		}
	}
}
