package dashboard

import "testing"

// TestPartsDoNotNest: a part opened inside a part is the outer part's
// text — an element without the attribute the page finds parts by — and
// the outer part ends at its own end tag.
func TestPartsDoNotNest(t *testing.T) {
	var b stringsBuilder
	ps := newPageSums(nil)
	h := &hw{w: &b, sums: ps}
	h.partOpen("div", "outer")
	h.m(">")
	h.partOpen("span", "inner")
	h.m(">x")
	h.partClose("span")
	h.m(" y")
	h.partClose("div")
	h.m(" after")
	if got, want := string(b), `<div data-part="outer"><span>x</span> y</div> after`; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
	if len(ps.sums) != 1 || ps.sums[0] != sumOfBytes([]byte(`<div data-part="outer"><span>x</span> y</div>`)) {
		t.Errorf("sums %q: want the outer part's alone", ps.sums)
	}
}
