package store

import (
	"iter"
	"slices"

	"github.com/benbjohnson/immutable"
)

// pmap is a persistent map from names to V, a hash array mapped trie
// (benbjohnson/immutable): set and del return a new map that shares all but
// the O(log n) nodes on the key's path with the old one, so a Workspace
// update copies what an edit touches, not the workspace.
type pmap[V any] struct{ m *immutable.Map[string, V] }

func (p pmap[V]) get(k string) V {
	v, _ := p.m.Get(k)
	return v
}

func (p pmap[V]) set(k string, v V) pmap[V] { return pmap[V]{p.m.Set(k, v)} }
func (p pmap[V]) del(k string) pmap[V]      { return pmap[V]{p.m.Delete(k)} }
func (p pmap[V]) len() int                  { return p.m.Len() }

// all yields every entry, in no particular order.
func (p pmap[V]) all() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for it := p.m.Iterator(); !it.Done(); {
			k, v, _ := it.Next()
			if !yield(k, v) {
				return
			}
		}
	}
}

func (p pmap[V]) sortedKeys() []string {
	keys := make([]string, 0, p.len())
	for k := range p.all() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pmapBuilder fills a new pmap in place (Build's bulk load).
type pmapBuilder[V any] struct {
	b *immutable.MapBuilder[string, V]
}

func newPmapBuilder[V any]() pmapBuilder[V] {
	return pmapBuilder[V]{immutable.NewMapBuilder[string, V](nameHasher{})}
}
func (b pmapBuilder[V]) set(k string, v V) { b.b.Set(k, v) }
func (b pmapBuilder[V]) done() pmap[V]     { return pmap[V]{b.b.Map()} }

// nameHasher hashes ids and paths with 32-bit FNV-1a: short ASCII keys,
// no reflection, no allocation.
type nameHasher struct{}

func (nameHasher) Hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (nameHasher) Equal(a, b string) bool { return a == b }
