// Package pairtab holds state per ordered pair of ranks (src, dst) of a
// world, made on first use: the links of an in-process world and the
// timings of a simulated one. A world of n ranks has n^2 pairs, and its
// algorithms use few of them (a ring 2 a rank, recursive doubling log2 n),
// so a table costs memory linear in n plus the pairs used: a dense n x n
// table of pointers, at 16384 ranks, was 2 GiB before a message moved.
//
// A Table is shared by the ranks; each rank looks its pairs up through a
// Cache of its own, which takes no lock once a pair is known to it.
package pairtab

import "sync"

// Table holds a *T per ordered pair of ranks, made on first use. Its
// methods are safe for concurrent use.
type Table[T any] struct {
	newPair func() *T
	into    []inbox[T] // into[dst] holds the pairs (·, dst)
}

// inbox is the pairs into one rank.
type inbox[T any] struct {
	mu   sync.Mutex // guards from
	from map[int]*T // by source rank
}

// New returns the table of a world of size ranks, whose pairs newPair
// makes.
func New[T any](size int, newPair func() *T) *Table[T] {
	return &Table[T]{newPair: newPair, into: make([]inbox[T], size)}
}

// Size returns the number of ranks of the table's world.
func (t *Table[T]) Size() int { return len(t.into) }

// Get returns the pair (src, dst), making it on first use; every call
// with the same ranks returns the same pointer. Both ranks must be in
// [0, Size()).
func (t *Table[T]) Get(src, dst int) *T {
	in := &t.into[dst]
	in.mu.Lock()
	defer in.mu.Unlock()
	v, ok := in.from[src]
	if !ok {
		if in.from == nil {
			in.from = map[int]*T{}
		}
		v = t.newPair()
		in.from[src] = v
	}
	return v
}

// Into calls f with every pair made so far into dst, in no particular
// order, holding dst's lock: f must not call t's methods for dst.
func (t *Table[T]) Into(dst int, f func(src int, v *T)) {
	in := &t.into[dst]
	in.mu.Lock()
	defer in.mu.Unlock()
	for src, v := range in.from {
		f(src, v)
	}
}

// Cache is one rank's view of a Table: the pairs it sends on (from it to
// a peer) and those it receives on (from a peer to it), remembered once
// looked up. It belongs to one goroutine at a time, as the rank's
// endpoint does.
type Cache[T any] struct {
	t       *Table[T]
	rank    int
	out, in map[int]*T // by peer
}

// Cache returns rank's view of t.
func (t *Table[T]) Cache(rank int) Cache[T] { return Cache[T]{t: t, rank: rank} }

// Out returns the pair from the cache's rank to peer.
func (c *Cache[T]) Out(peer int) *T {
	if v, ok := c.out[peer]; ok {
		return v
	}
	if c.out == nil {
		c.out = map[int]*T{}
	}
	v := c.t.Get(c.rank, peer)
	c.out[peer] = v
	return v
}

// In returns the pair from peer to the cache's rank.
func (c *Cache[T]) In(peer int) *T {
	if v, ok := c.in[peer]; ok {
		return v
	}
	if c.in == nil {
		c.in = map[int]*T{}
	}
	v := c.t.Get(peer, c.rank)
	c.in[peer] = v
	return v
}
