package gallocr

// treap is an ordered set of (k1, k2) keys with a value each, kept in one
// slice of nodes (index 0 is the nil node). Priorities come from a
// per-treap generator, so the shape — and therefore the run time, never
// the answers — depends only on the sequence of operations.
type treap struct {
	nodes []tnode
	root  int32
	spare []int32 // freed node slots
	n     int
	rng   uint64
}

type tnode struct {
	k1, k2, val uint64
	pri         uint64
	l, r        int32
}

func keyLess(a1, a2, b1, b2 uint64) bool { return a1 < b1 || a1 == b1 && a2 < b2 }

func (t *treap) clear() {
	if t.nodes == nil {
		t.nodes = make([]tnode, 1, 64)
	}
	t.nodes = t.nodes[:1]
	t.spare = t.spare[:0]
	t.root, t.n = 0, 0
}

func (t *treap) len() int { return t.n }

func (t *treap) nextPri() uint64 {
	// splitmix64
	t.rng += 0x9e3779b97f4a7c15
	z := t.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// split cuts subtree n into keys < (k1, k2) and keys >= (k1, k2).
func (t *treap) split(n int32, k1, k2 uint64) (int32, int32) {
	if n == 0 {
		return 0, 0
	}
	nd := &t.nodes[n]
	if keyLess(nd.k1, nd.k2, k1, k2) {
		l, r := t.split(nd.r, k1, k2)
		t.nodes[n].r = l
		return n, r
	}
	l, r := t.split(nd.l, k1, k2)
	t.nodes[n].l = r
	return l, n
}

// merge joins subtrees a and b, every key of a below every key of b.
func (t *treap) merge(a, b int32) int32 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	if t.nodes[a].pri > t.nodes[b].pri {
		t.nodes[a].r = t.merge(t.nodes[a].r, b)
		return a
	}
	t.nodes[b].l = t.merge(a, t.nodes[b].l)
	return b
}

// insert adds key (k1, k2), which must not be present, with value v.
func (t *treap) insert(k1, k2, v uint64) {
	if t.nodes == nil {
		t.clear()
	}
	var n int32
	nd := tnode{k1: k1, k2: k2, val: v, pri: t.nextPri()}
	if k := len(t.spare); k > 0 {
		n = t.spare[k-1]
		t.spare = t.spare[:k-1]
		t.nodes[n] = nd
	} else {
		n = int32(len(t.nodes))
		t.nodes = append(t.nodes, nd)
	}
	l, r := t.split(t.root, k1, k2)
	t.root = t.merge(t.merge(l, n), r)
	t.n++
}

// remove deletes key (k1, k2) and reports whether it was present.
func (t *treap) remove(k1, k2 uint64) bool {
	p := &t.root
	for *p != 0 {
		n := *p
		nd := &t.nodes[n]
		switch {
		case nd.k1 == k1 && nd.k2 == k2:
			*p = t.merge(nd.l, nd.r)
			t.spare = append(t.spare, n)
			t.n--
			return true
		case keyLess(k1, k2, nd.k1, nd.k2):
			p = &nd.l
		default:
			p = &nd.r
		}
	}
	return false
}

// ceil returns the node of the smallest key >= (k1, k2), 0 if none.
func (t *treap) ceil(k1, k2 uint64) int32 {
	var res int32
	for n := t.root; n != 0; {
		nd := &t.nodes[n]
		if keyLess(nd.k1, nd.k2, k1, k2) {
			n = nd.r
		} else {
			res, n = n, nd.l
		}
	}
	return res
}

// lower returns the node of the largest key < (k1, k2), 0 if none.
func (t *treap) lower(k1, k2 uint64) int32 {
	var res int32
	for n := t.root; n != 0; {
		nd := &t.nodes[n]
		if keyLess(nd.k1, nd.k2, k1, k2) {
			res, n = n, nd.r
		} else {
			n = nd.l
		}
	}
	return res
}

// last returns the node of the largest key, 0 if empty.
func (t *treap) last() int32 {
	n := t.root
	for n != 0 && t.nodes[n].r != 0 {
		n = t.nodes[n].r
	}
	return n
}

// blockIndex is a chunk's free list when it is long: the blocks by offset
// (for merging with neighbours) and every block but the last by (size,
// descending offset), so ggml's best fit — the smallest block that fits,
// the last in address order among equal sizes, never the chunk's last
// block — is one ceiling search instead of a scan.
type blockIndex struct {
	byOff  treap // key (offset, 0), value size
	bySize treap // key (size, ^offset)
}

func (x *blockIndex) clear() {
	x.byOff.clear()
	x.bySize.clear()
}

func (x *blockIndex) len() int { return x.byOff.len() }

// lastBlock returns the block with the highest offset.
func (x *blockIndex) lastBlock() (freeBlock, bool) {
	n := x.byOff.last()
	if n == 0 {
		return freeBlock{}, false
	}
	nd := &x.byOff.nodes[n]
	return freeBlock{nd.k1, nd.val}, true
}

func (x *blockIndex) insert(b freeBlock) {
	if last, ok := x.lastBlock(); !ok || b.offset > last.offset {
		if ok {
			x.bySize.insert(last.size, ^last.offset, 0)
		}
	} else {
		x.bySize.insert(b.size, ^b.offset, 0)
	}
	x.byOff.insert(b.offset, 0, b.size)
}

func (x *blockIndex) remove(b freeBlock) {
	last, _ := x.lastBlock()
	x.byOff.remove(b.offset, 0)
	if b.offset != last.offset {
		x.bySize.remove(b.size, ^b.offset)
		return
	}
	if nl, ok := x.lastBlock(); ok {
		x.bySize.remove(nl.size, ^nl.offset)
	}
}

// bestFit returns the smallest block but the last of at least size bytes,
// the highest-addressed among equal sizes.
func (x *blockIndex) bestFit(size uint64) (freeBlock, bool) {
	n := x.bySize.ceil(size, 0)
	if n == 0 {
		return freeBlock{}, false
	}
	nd := &x.bySize.nodes[n]
	return freeBlock{^nd.k2, nd.k1}, true
}

// neighbours returns the blocks just below and at or above offset.
func (x *blockIndex) neighbours(offset uint64) (prev, next freeBlock, hasPrev, hasNext bool) {
	if n := x.byOff.lower(offset, 0); n != 0 {
		nd := &x.byOff.nodes[n]
		prev, hasPrev = freeBlock{nd.k1, nd.val}, true
	}
	if n := x.byOff.ceil(offset, 0); n != 0 {
		nd := &x.byOff.nodes[n]
		next, hasNext = freeBlock{nd.k1, nd.val}, true
	}
	return
}
