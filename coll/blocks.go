package coll

// span returns the element range [lo, hi) of part i when count elements are
// split into parts near-equal parts; the first count%parts parts get one
// more element.
func span(count, parts, i int) (lo, hi int) {
	q, r := count/parts, count%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
}

// elems returns the bytes of elements [lo, hi) of buf, for elements of es
// bytes.
func elems(buf []byte, lo, hi, es int) []byte { return buf[lo*es : hi*es] }

// block returns block i of buf when buf is made of blocks of b bytes.
func block(buf []byte, i, b int) []byte { return buf[i*b : (i+1)*b] }

// mod returns x mod n in [0, n).
func mod(x, n int) int { return ((x % n) + n) % n }
