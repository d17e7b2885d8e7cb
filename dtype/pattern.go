package dtype

import (
	"bytes"
	"fmt"
	"math/bits"
)

// Period is the number of elements after which every pattern repeats. It is
// prime, so a block misplaced by any whole number of typical chunk sizes
// (powers of two) lands on different values.
const Period = 509

// Pattern describes the inputs of one run: element type, reduction, number
// of ranks. Its values are small integers chosen so that reducing them is
// exact in DType for every reduction order: every partial result of a sum
// or product stays an integer in [0, L], where L is the largest integer such
// that all of [0, L] is exactly representable in DType (127 for int8, 2048
// for fp16, 256 for bf16, 16 for f8e4m3, 8 for f8e5m2, 2^24 for fp32 and,
// to keep patterns alike, for the 32- and 64-bit integers; 2^53 for fp64).
// For MulSum the same holds of the pre-multiplied inputs and their sums. So the result a collective
// computes can be checked bit for bit, whatever algorithm it used.
//
// A Pattern is a plain value; its methods are safe for concurrent use.
type Pattern struct {
	DType DType    // element type
	Op    ReduceOp // reduction the inputs are chosen for
	Ranks int      // number of contributing ranks, >= 1
}

// exactLimit returns L: every integer in [0, L] is exact in dt and fits it.
func exactLimit(dt DType) int64 {
	switch dt {
	case Int8:
		return 127
	case Uint8:
		return 255
	case Int16:
		return 32767
	case Uint16:
		return 65535
	case FP16:
		return 2048
	case BF16:
		return 256
	case F8E4M3:
		return 16 // 1.111b × 2^3 = 15 and 2^4: 17 needs a fourth mantissa bit
	case F8E5M2:
		return 8
	case FP64:
		return 1 << 53
	}
	return 1 << 24 // fp32; 32- and 64-bit integers by choice
}

// mix hashes (rank, j) into 64 well-spread bits (splitmix64 finaliser).
func mix(rank, j int) uint64 {
	h := uint64(rank)*0x9e3779b97f4a7c15 ^ uint64(j)*0xc2b2ae3d27d4eb4f
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// Value returns input element i of rank (0 <= rank < Ranks). It depends on
// i only through i % Period and is a non-negative integer exact in DType:
//
//   - Sum, Avg: in [0, L/Ranks]; about half the ranks, chosen per index,
//     hold a level that depends on i only, the others a hash of (rank, i).
//     If L < Ranks: a 1 for between L/2 and L of the ranks (how many and
//     which depend on i), 0 for the rest.
//   - MulSum: as Sum with the weight W = sum of PreMulScalar over the
//     ranks (ceil(Ranks/2) + 2*floor(Ranks/2)) in place of Ranks, so that
//     the pre-multiplied inputs sum to at most L: in [0, L/W]; if L < W, a
//     1 for between L/4 and L/2 of the ranks.
//   - Prod: 1 or 2, with at most floor(log2 L) twos per index over all
//     ranks, the count and the ranks holding them varying with i.
//   - Max, Min: in [0, min(L, 1000)], a per-index base plus a per-rank
//     offset, so that both the maximum and the minimum vary with i.
//
// Value panics if Ranks < 1.
func (p Pattern) Value(rank, i int) float64 {
	if p.Ranks < 1 {
		panic(fmt.Sprintf("dtype.Pattern: %d ranks", p.Ranks))
	}
	j := phase(i)
	lim := exactLimit(p.DType)
	n := int64(p.Ranks)
	switch p.Op {
	case Prod:
		twos := int64(bits.Len64(uint64(lim)) - 1)
		c := int64(j) % (min(twos, n) + 1)
		if (int64(j)*7+int64(rank))%n < c {
			return 2
		}
		return 1
	case Max, Min:
		w := min(lim, 1000)
		span := w / 4
		base := int64(mix(-1, j) % uint64(w-span+1))
		return float64(base + int64(mix(rank, j)%uint64(span+1)))
	default: // Sum, Avg, MulSum
		w := n
		if p.Op == MulSum {
			w = mulSumWeight(p.Ranks)
		}
		if m := uint64(lim / w); m >= 1 {
			// Half the ranks, chosen per index, hold a per-index level and
			// the rest noise, so that sums and averages (truncated ones
			// too) spread over the range instead of all sitting near the
			// mean of Ranks uniform values.
			if h := mix(rank, j); h&1 == 1 {
				return float64((h >> 1) % (m + 1))
			}
			return float64(mix(-1, j) % (m + 1))
		}
		c := lim - int64(j)%(lim/2+1)
		if p.Op == MulSum {
			c /= 2 // a 1 on an odd rank counts 2
		}
		if (int64(j)+int64(rank))%n < c {
			return 1
		}
		return 0
	}
}

// mulSumWeight returns the sum of PreMulScalar over ranks 0..ranks-1.
func mulSumWeight(ranks int) int64 {
	return int64((ranks+1)/2 + 2*(ranks/2))
}

// Template returns the encoded elements 0 .. 2*Period-1 of Value(src, ·)
// for src >= 0, or of Reduced(·) for src == -1. Two periods let any phase
// be sliced out as one contiguous period: elements first .. first+Period-1
// of the pattern are Template(src)[(first%Period)*size:][:Period*size].
// The slice is newly allocated and owned by the caller. It costs O(Period)
// time: for src == -1 it copies the pattern's reduced template, which is
// computed once per Pattern in the process (reducedTemplate), so that
// every rank of a world may ask for it.
func (p Pattern) Template(src int) []byte {
	if src < -1 {
		panic(fmt.Sprintf("dtype.Pattern.Template: source %d < -1", src))
	}
	if src == -1 {
		return bytes.Clone(p.reducedTemplate())
	}
	return p.valueTemplate(src)
}

// valueTemplate is Template(src) for src >= 0.
func (p Pattern) valueTemplate(src int) []byte {
	s := p.DType.Size()
	t := make([]byte, 2*Period*s)
	for k := range Period {
		Encode(p.DType, t, k, p.Value(src, k))
	}
	copy(t[Period*s:], t[:Period*s])
	return t
}

// fillChunk is the size of the phase-aligned block Fill repeats: a whole
// number of periods near 64 KiB, small enough to stay in L2 while it is
// copied over a large buffer, so Fill runs at memory write speed.
const fillChunk = 64 << 10

// Fill encodes Value(rank, first+k) into element k of buf, for every
// element of buf; first is the index of buf's first element in the whole
// input (a chunk's offset in elements). len(buf) must be a multiple of
// DType.Size(). Fill encodes one template and copies it, so it runs at
// memory write speed.
func (p Pattern) Fill(buf []byte, rank, first int) {
	s := p.DType.Size()
	if s == 0 || len(buf)%s != 0 {
		panic(fmt.Sprintf("dtype.Pattern.Fill: %d bytes is not a whole number of %v elements", len(buf), p.DType))
	}
	one := onePeriod(p.Template(rank), s, first)
	// Build a chunk of whole periods by doubling within buf itself, then
	// copy that chunk, which is periodic from its start, along the rest.
	n := copy(buf, one)
	for n < len(buf) && n < fillChunk {
		n += copy(buf[n:], buf[:n])
	}
	for n < len(buf) {
		n += copy(buf[n:], buf[:(fillChunk/len(one))*len(one)])
	}
}

// onePeriod returns the Period elements of tmpl starting at element first
// modulo Period.
func onePeriod(tmpl []byte, size, first int) []byte {
	if len(tmpl) < 2*Period*size {
		panic(fmt.Sprintf("dtype: template of %d bytes is shorter than two periods of %d-byte elements", len(tmpl), size))
	}
	off := phase(first) * size
	return tmpl[off : off+Period*size]
}

// phase returns i modulo Period, in [0, Period) also for negative i.
func phase(i int) int {
	j := i % Period
	if j < 0 {
		j += Period
	}
	return j
}

// CountWrong returns how many elements k of got differ bitwise from
// element first+k of the pattern's Template(src): rank src's input for
// src >= 0, the reduction for src == -1. len(got) must be a multiple of
// DType.Size(). Its time is linear in len(got): a block shorter than a
// period is compared element by element with the values it should hold
// rather than with a period encoded for it, and the reduction's template
// is the one shared by every rank (reducedTemplate).
func (p Pattern) CountWrong(got []byte, src, first int) int {
	s := p.DType.Size()
	switch {
	case src == -1:
		return CountWrong(p.DType, got, p.reducedTemplate(), first)
	case src < -1:
		panic(fmt.Sprintf("dtype.Pattern.CountWrong: source %d < -1", src))
	case s == 0 || len(got)%s != 0:
		panic(fmt.Sprintf("dtype.Pattern.CountWrong: %d bytes is not a whole number of %v elements", len(got), p.DType))
	case len(got) >= Period*s:
		return CountWrong(p.DType, got, p.valueTemplate(src), first)
	}
	var one [8]byte
	wrong := 0
	for k := 0; k*s < len(got); k++ {
		Encode(p.DType, one[:s], 0, p.Value(src, first+k))
		if !bytes.Equal(got[k*s:k*s+s], one[:s]) {
			wrong++
		}
	}
	return wrong
}

// CountWrong returns how many elements k of got differ bitwise from element
// (first+k) % Period of tmpl, a template of elements of type dt as returned
// by Pattern.Template. It compares whole periods with bytes.Equal and looks
// at single elements only inside a period that differs, so a correct
// buffer is checked at memory speed. len(got) must be a multiple of
// dt.Size().
func CountWrong(dt DType, got, tmpl []byte, first int) int {
	s := dt.Size()
	if s == 0 || len(got)%s != 0 {
		panic(fmt.Sprintf("dtype.CountWrong: %d bytes is not a whole number of %v elements", len(got), dt))
	}
	want := onePeriod(tmpl, s, first)
	wrong := 0
	for len(got) > 0 {
		blk := got[:min(len(got), len(want))]
		ref := want[:len(blk)]
		if !bytes.Equal(blk, ref) {
			for k := 0; k < len(blk); k += s {
				if !bytes.Equal(blk[k:k+s], ref[k:k+s]) {
					wrong++
				}
			}
		}
		got = got[len(blk):]
	}
	return wrong
}
