package jsonc

import "sort"

// PathElem is one step from a container to a child: Key for an object
// member (Index is -1), Index for an array element. IsKey is true when the
// offset is inside the member's key string rather than its value.
type PathElem struct {
	Key   string
	Index int
	IsKey bool
}

// Location describes where an offset falls in the tree, for editor features
// (hover, completion, definition).
type Location struct {
	Path   []PathElem // from root to the node
	Node   *Node      // the innermost node (value, or key string as Key.Node) containing offset; nil if none
	Member *Member    // the member when the innermost thing is a key or a member's value
	Parent *Node      // the container holding Node
}

// LocationAt returns the path to the innermost node containing offset.
//
// A scalar or key contains the offsets from its Start to its End inclusive,
// so a cursor just after a word or string (where completion is asked for)
// still finds it; a closed object or array does not contain its End, which
// is after the closing bracket. When offset is after a member's colon and
// that member has no value yet (`{"a": |`), Node is nil and Member and Path
// name the member, so completion can offer values for it.
func (d *Document) LocationAt(offset int) Location {
	var loc Location
	if d == nil || d.Root == nil || !contains(d.Root, offset) {
		return loc
	}
	n := d.Root
	for {
		switch n.Kind {
		case Object:
			ms := n.Members()
			i := sort.Search(len(ms), func(i int) bool { return ms[i].Key.Start() > offset }) - 1
			if i < 0 {
				break
			}
			m := &ms[i]
			if m.Key.Start() <= offset && offset <= m.Key.End() {
				loc.Path = append(loc.Path, PathElem{Key: m.Key.Str(), Index: -1, IsKey: true})
				loc.Node, loc.Member, loc.Parent = m.Key.Node(), m, n
				return loc
			}
			if m.Value != nil && contains(m.Value, offset) {
				loc.Path = append(loc.Path, PathElem{Key: m.Key.Str(), Index: -1})
				loc.Member, loc.Parent = m, n
				n = m.Value
				continue
			}
			if c := m.Colon(); m.Value == nil && c >= 0 && offset > c && onlySpace(d.Src, c+1, offset) {
				loc.Path = append(loc.Path, PathElem{Key: m.Key.Str(), Index: -1})
				loc.Node, loc.Member, loc.Parent = nil, m, n
				return loc
			}
		case Array:
			i := sort.Search(len(n.Elems()), func(i int) bool { return n.Elems()[i].Start() > offset }) - 1
			if i < 0 {
				break
			}
			if e := n.Elems()[i]; contains(e, offset) {
				loc.Path = append(loc.Path, PathElem{Index: i})
				loc.Member, loc.Parent = nil, n
				n = e
				continue
			}
		}
		loc.Node = n
		return loc
	}
}

func contains(n *Node, offset int) bool {
	if offset < n.Start() || offset > n.End() {
		return false
	}
	if offset == n.End() && n.Closed && (n.Kind == Object || n.Kind == Array) {
		return false
	}
	return true
}

func onlySpace(src []byte, from, to int) bool {
	if to > len(src) {
		return false
	}
	for i := from; i < to; i++ {
		if !isSpace(src[i]) {
			return false
		}
	}
	return true
}
