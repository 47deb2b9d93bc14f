package jsonc

import "unsafe"

// A Batch parses many documents in turn, as ParseOwned does, for a caller
// that keeps them all, such as the load of a workspace. It reuses its
// scratch space from one document to the next and hands out every
// document's nodes, member lists and element lists from shared chunks, so
// nothing is sized by an estimate or rounded up per document: at 88,000
// files that is tens of megabytes. A chunk stays alive while any document
// carved from it does, so documents that are soon replaced should not come
// from a Batch. A Batch is used by one goroutine at a time; its zero value
// is ready.
type Batch struct {
	p parser
}

// ParseOwned parses src, which the caller hands over (see the function
// ParseOwned).
func (b *Batch) ParseOwned(src []byte) *Document {
	p := &b.p
	p.batch = true
	doc := p.parse(src, unsafe.String(unsafe.SliceData(src), len(src)))
	p.src, p.text = nil, ""
	return doc
}

// Chunk sizes of a Batch: 1,024 nodes are 22 whole pages.
const (
	nodeChunk   = 1024
	memberChunk = 2048
	elemChunk   = 4096
	docChunk    = 256
)

// carve hands out n zeroed elements from the chunk *slab, starting a new
// chunk of size elements when it is full; n larger than a quarter chunk
// gets its own allocation, so a chunk's tail wastes little. The result's
// capacity is n: appending to it never writes into the chunk.
func carve[T any](slab *[]T, n, size int) []T {
	if n > size/4 {
		return make([]T, n)
	}
	s := *slab
	if len(s)+n > cap(s) {
		s = make([]T, 0, size)
	}
	*slab = s[:len(s)+n]
	return s[len(s) : len(s)+n : len(s)+n]
}
