package coll

import (
	"fmt"
	"hash/fnv"
)

// MaxCountRanks is the most ranks a Counts holds: its n x n cells are one
// slice, and past 4096 ranks (2^24 cells) that slice alone is 128 MiB for
// each distinct matrix.
const MaxCountRanks = 4096

// Counts are the element counts of one call of a variable-size collective
// (alltoallv, allgatherv, reducescatterv): At(src, dst) elements go from
// rank src to rank dst. Every rank of a call must hold the same counts:
// the call's signature carries their digest, so ranks that disagree fail
// with an error naming both sides rather than moving bytes to the wrong
// place. A Counts is immutable once made, so the ranks of one process
// share one.
//
// The collectives read them so (let c(s, d) = At(s, d)):
//
//	alltoallv       rank r sends c(r, d) elements to each rank d, its
//	                send buffer the blocks to d = 0, 1, ... one after the
//	                other; it receives c(s, r) from each rank s, its
//	                receive buffer the blocks from s = 0, 1, ... likewise
//	allgatherv      rank r's block holds PerRank(r) elements, the sum of
//	                its column (what rank r receives in the alltoallv of
//	                the same counts: the tokens its experts got); every
//	                rank receives every rank's block, in rank order
//	reducescatterv  every rank sends all the blocks, block d of
//	                PerRank(d) elements; rank r receives the reduction of
//	                block r
type Counts struct {
	n      int
	cells  []int // row-major: cells[src*n+dst]
	column []int // column[dst]: the sum of column dst
	total  int
	digest uint64
}

// NewCounts returns the counts of n ranks, cells[src*n+dst] elements from
// src to dst. It refuses n outside 1 to MaxCountRanks, a cells slice of
// another length and a negative count. The slice is copied.
func NewCounts(n int, cells []int) (*Counts, error) {
	if n < 1 || n > MaxCountRanks {
		return nil, fmt.Errorf("counts of %d ranks: want 1 to %d", n, MaxCountRanks)
	}
	if len(cells) != n*n {
		return nil, fmt.Errorf("counts of %d ranks: %d cells, want %d", n, len(cells), n*n)
	}
	h := fnv.New64a()
	var b [8]byte
	for i, v := range cells {
		if v < 0 {
			return nil, fmt.Errorf("counts: %d elements from rank %d to rank %d: negative", v, i/n, i%n)
		}
		for k := range b {
			b[k] = byte(uint64(v) >> (8 * k))
		}
		h.Write(b[:])
	}
	c := &Counts{n: n, cells: append([]int(nil), cells...), column: make([]int, n), digest: h.Sum64()}
	for i, v := range cells {
		c.column[i%n] += v
		c.total += v
	}
	return c, nil
}

// Ranks returns n.
func (c *Counts) Ranks() int { return c.n }

// At returns the elements src sends to dst.
func (c *Counts) At(src, dst int) int { return c.cells[src*c.n+dst] }

// Sent returns the elements src sends in all (its row's sum).
func (c *Counts) Sent(src int) int {
	s := 0
	for _, v := range c.cells[src*c.n : (src+1)*c.n] {
		s += v
	}
	return s
}

// Received returns the elements dst receives in all (its column's sum).
func (c *Counts) Received(dst int) int { return c.column[dst] }

// PerRank returns rank's count in allgatherv and reducescatterv: its
// column's sum, Received(rank). A routing sends the same from every rank
// and receives unevenly, so the column is where its skew shows.
func (c *Counts) PerRank(rank int) int { return c.Received(rank) }

// Total returns the elements of the whole matrix.
func (c *Counts) Total() int { return c.total }

// Digest returns a hash of the counts, the same for equal counts.
func (c *Counts) Digest() uint64 { return c.digest }

// Span is a stretch of a buffer: Len elements from element Off on.
type Span struct{ Off, Len int }

// SendSpans returns where each block of rank's send buffer sits in
// alltoallv: block d, for rank d, Len c(rank, d) from the sum of the
// blocks before it.
func (c *Counts) SendSpans(rank int) []Span {
	out := make([]Span, c.n)
	off := 0
	for d := range out {
		out[d] = Span{off, c.At(rank, d)}
		off += out[d].Len
	}
	return out
}

// RecvSpans returns where each block of rank's receive buffer sits in
// alltoallv: block s, from rank s, Len c(s, rank) from the sum of the
// blocks before it.
func (c *Counts) RecvSpans(rank int) []Span {
	out := make([]Span, c.n)
	off := 0
	for s := range out {
		out[s] = Span{off, c.At(s, rank)}
		off += out[s].Len
	}
	return out
}

// RankSpans returns where each rank's block sits in allgatherv's receive
// buffer and reducescatterv's send buffer: block r of PerRank(r) elements,
// in rank order.
func (c *Counts) RankSpans() []Span {
	out := make([]Span, c.n)
	off := 0
	for r := range out {
		out[r] = Span{off, c.PerRank(r)}
		off += out[r].Len
	}
	return out
}

// bytes returns s in bytes of elements of size es, as a slice of buf.
func (s Span) bytes(buf []byte, es int) []byte { return buf[s.Off*es : (s.Off+s.Len)*es] }

// CountsOfBytes returns the counts of n ranks whose cell (src, dst) holds
// bytes(src, dst) bytes, in elements of es bytes: a traffic matrix's
// bytes over the data type's size. A cell that is not a whole number of
// elements is refused.
func CountsOfBytes(n, es int, bytes func(src, dst int) int64) (*Counts, error) {
	if n < 1 || n > MaxCountRanks {
		return nil, fmt.Errorf("counts of %d ranks: want 1 to %d", n, MaxCountRanks)
	}
	cells := make([]int, n*n)
	for s := range n {
		for d := range n {
			b := bytes(s, d)
			if b%int64(es) != 0 {
				return nil, fmt.Errorf("counts: %d bytes from rank %d to rank %d: not a whole number of %d-byte elements", b, s, d, es)
			}
			cells[s*n+d] = int(b / int64(es))
		}
	}
	return NewCounts(n, cells)
}

// String names the counts by their ranks and digest, the same in every
// process that holds equal counts: "4 ranks, counts #1e1a07d03b52".
func (c *Counts) String() string {
	return fmt.Sprintf("%d ranks, counts #%012x", c.n, c.digest>>16)
}
