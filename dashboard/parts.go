package dashboard

// A page in parts. A live page fetches itself again at each change it may
// show; a 200-story epic's page, parsed and compared whole in the browser
// at every change, kept the page's one thread busy longer than changes came
// (docs/architecture.md#a-live-page-in-parts). So a page is written as a
// frame and its parts — elements the page can take alone: a story's row,
// the graph's data, the epic's facts — and summed as it is written. The
// page sent whole ends with its sums; a page fetching itself sends the
// sums it holds, and while its frame is the same it gets back only the
// parts whose sums differ. The server still makes the whole page from one
// snapshot: a part is never made apart from the rest, so a page patched by
// parts is the page made afresh (TestPagePatchedIsPageMade).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net/http"
	"strconv"
	"strings"
)

// partsHeader is the request header a live page sends its page's sums in:
// its frame's, then its parts' in the page's order, space-separated.
const partsHeader = "X-Dashboard-Parts"

// maxParts bounds the sums a request may send: a page has a part per row.
const maxParts = 1 << 16

// sumLen is a sum's length: 12 bytes of SHA-256, base64url. A collision
// would leave a part stale, so the sum is one a page's text cannot aim at.
const sumLen = 16

// pageSums follows a page as hw writes it: the frame — the page outside
// its parts, each part's key in its place — and each part, summed. The
// page's thousands of short writes are gathered and hashed in blocks: a
// write each cost a copy and a call, a quarter of an epic page's making
// (docs/architecture.md#an-epic-of-200-stories).
type pageSums struct {
	frame    hash.Hash
	frameBuf []byte // the frame not yet hashed
	inPart   bool
	nested   int      // parts opened inside the part: text of it
	part     []byte   // the part being written
	quiet    bool     // writing what no sum covers: the page's sequence, the sums
	sums     []string // the parts' sums so far, in the page's order

	// held is the page the client holds (its frame's sum, then its parts'),
	// nil when the page is sent whole; changed, the parts that differ from
	// it, by index.
	held    []string
	changed map[int]string
}

// hashBlock is how much of the frame is gathered before it is hashed.
const hashBlock = 16 << 10

func newPageSums(held []string) *pageSums {
	ps := &pageSums{frame: sha256.New(), held: held}
	if held != nil {
		ps.changed = map[int]string{}
	}
	return ps
}

func (ps *pageSums) add(s string) {
	switch {
	case ps.quiet:
	case ps.inPart:
		ps.part = append(ps.part, s...)
	default:
		ps.frameBuf = append(ps.frameBuf, s...)
		if len(ps.frameBuf) >= hashBlock {
			ps.frame.Write(ps.frameBuf)
			ps.frameBuf = ps.frameBuf[:0]
		}
	}
}

func sumOfBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

func (ps *pageSums) frameSum() string {
	ps.frame.Write(ps.frameBuf)
	ps.frameBuf = ps.frameBuf[:0]
	return base64.RawURLEncoding.EncodeToString(ps.frame.Sum(nil)[:12])
}

func (ps *pageSums) begin(key string) {
	// The key in the frame: parts added, removed or moved change it.
	ps.add("\x00" + strconv.Itoa(len(key)) + ":" + key)
	ps.inPart = true
	ps.part = ps.part[:0]
}

func (ps *pageSums) end() {
	sum := sumOfBytes(ps.part)
	i := len(ps.sums)
	ps.sums = append(ps.sums, sum)
	ps.inPart = false
	if ps.held != nil && (i+1 >= len(ps.held) || ps.held[i+1] != sum) {
		ps.changed[i] = string(ps.part)
	}
}

// all is the page's sums as the page sends them back.
func (ps *pageSums) all() string {
	return ps.frameSum() + " " + strings.Join(ps.sums, " ")
}

// sameFrame says whether the page written is the held one but for its
// parts.
func (ps *pageSums) sameFrame() bool {
	return len(ps.held) == len(ps.sums)+1 && ps.held[0] == ps.frameSum()
}

// heldSums is the page r's client holds, from its header; nil when it
// sends none or none well-formed.
func heldSums(r *http.Request) []string {
	v := r.Header.Get(partsHeader)
	if v == "" || len(v) > maxParts*(sumLen+1) {
		return nil
	}
	f := strings.Fields(v)
	for _, s := range f {
		if len(s) != sumLen {
			return nil
		}
	}
	return f
}

// partOpen opens a part of the page: writes `<tag data-part="key"`, the
// rest of the start tag and the element's content left to the caller,
// partClose its end. Parts do not nest: inside one, a part is its text,
// an element without the attribute (the page finds parts by it).
func (h *hw) partOpen(tag markup, key string) {
	nested := h.sums != nil && h.sums.inPart
	switch {
	case nested:
		h.sums.nested++
	case h.sums != nil:
		h.sums.begin(key)
	}
	h.m("<" + tag)
	if !nested {
		h.a("data-part", key)
	}
}

// partClose writes the part's end tag and closes it.
func (h *hw) partClose(tag markup) {
	h.m("</" + tag + ">")
	switch {
	case h.sums == nil || !h.sums.inPart:
	case h.sums.nested > 0:
		h.sums.nested--
	default:
		h.sums.end()
	}
}

// unsummed writes what no sum covers.
func (h *hw) unsummed(write func()) {
	if h.sums == nil {
		write()
		return
	}
	q := h.sums.quiet
	h.sums.quiet = true
	write()
	h.sums.quiet = q
}

// partsElement writes the page's sums, at its end, for its script; what
// follows it is not summed.
func (h *hw) partsElement() {
	if h.sums == nil {
		return
	}
	all := h.sums.all()
	h.sums.quiet = true
	h.m(`<div id="page-parts" hidden`)
	h.a("data-parts", all)
	h.m("></div>\n")
}

// renderChanged answers a page fetching itself with what changed of it —
// the parts whose sums differ from those it holds, and the page's sums —
// when its frame is the same, and says whether it did (when it did not,
// the page is written whole). The answer is JSON:
// {"sums": "…", "parts": {"3": "<tr …>"}}, a part by its index in the page.
func (s *Server) renderChanged(w http.ResponseWriter, p page, content func(h *hw)) bool {
	ps := newPageSums(p.Held)
	h := &hw{sums: ps}
	h.layout(p, func() { content(h) })
	if !ps.sameFrame() {
		return false
	}
	parts := make(map[string]string, len(ps.changed))
	for i, html := range ps.changed {
		parts[strconv.Itoa(i)] = html
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Sums  string            `json:"sums"`
		Parts map[string]string `json:"parts"`
	}{ps.all(), parts})
	return true
}
