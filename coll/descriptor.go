package coll

// Descriptor is everything the harness knows about one collective apart
// from its algorithms, in one place, as nccl-tests' struct testColl is for
// each of its collectives: its name, what it takes, how a size splits into
// blocks, each rank's buffer lengths, the in-place layout and the result
// that the check expects. The table of them is in collectives.go; Op.Desc
// looks one up. Lengths and expectations are in blocks of Args.Count
// elements, so they hold for every count and data type.
type Descriptor struct {
	// Name is the collective's name as the command line spells it
	// ("allreduce").
	Name string

	// Bench is the collective's name in Go benchmark format, the first
	// part of a benchmark's name (results.BenchFmt: "AllReduce").
	Bench string

	// Reduces reports whether the collective combines data with a
	// reduction operator, and so takes Args.RedOp (--redop).
	Reduces bool

	// Rooted reports whether the collective has a root rank, Args.Root.
	Rooted bool

	// BusFactor returns the factor that turns algorithm bandwidth into
	// bus bandwidth on n ranks, as nccl-tests defines it.
	BusFactor func(n int) float64

	// Lengths returns how many count-sized blocks rank's send and
	// receive buffers hold on n ranks with the given root (ignored by
	// collectives without one). A rank that sends or receives nothing
	// (non-roots of broadcast and scatter on the send side, of reduce and
	// gather on the receive side) has length 0. The root's lengths are
	// the largest of any rank's.
	Lengths func(rank, root, n int) (send, recv int)

	// InPlace is where send and receive sit inside the one buffer of an
	// in-place call.
	InPlace Layout

	// Peers returns how many ranks one rank of n exchanges messages with
	// (each takes a link, which the memory estimate counts), or is nil
	// for the default of Op.Peers: the peers of a doubling algorithm.
	Peers func(n int) int

	// Expect returns what each block of rank's receive buffer must hold
	// after the call, in order from block 0, for inputs filled by
	// dtype.Pattern (rank r's send buffer holds pattern values (r, 0),
	// (r, 1), ...). It is nil for a rank with no output to check.
	Expect func(rank, root, n int) []Expected

	// VLengths is nil but for a variable-size collective, whose blocks
	// have counts of their own (Args.Counts): it returns rank's send and
	// receive lengths in elements under c, as Lengths does in blocks for
	// the others. Lengths then gives the blocks of the row's nominal size
	// (Blocks, which a size is rounded to), and Expect is nil.
	VLengths func(rank int, c *Counts) (send, recv int)

	// VExpect is Expect for a variable-size collective: what rank's
	// receive buffer must hold under c, in order from its start.
	VExpect func(rank int, c *Counts) []VExpected
}

// VExpected is what one stretch of a variable-size collective's receive
// buffer must hold: Len elements of dtype.Pattern.Template(Template) from
// element From on.
type VExpected struct {
	Template, From, Len int
}

// Variable reports whether the collective's blocks have counts of their
// own (Args.Counts): alltoallv, allgatherv, reducescatterv.
func (d *Descriptor) Variable() bool { return d.VLengths != nil }

// Offset returns the element at which block `block` of rank's larger
// buffer starts in a call of a on n ranks: block x Args.Count for a
// collective whose blocks are alike, and the sum of the blocks before it
// for a variable-size one (Counts.RankSpans; alltoallv has no in-place
// layout, and takes its receive side's); block n is the buffer's end.
// The in-place layout and its test
// (InPlaceCall, the harness's buffers) go through it.
func (d *Descriptor) Offset(a *Args, rank, block, n int) int {
	if !d.Variable() || a.Counts == nil {
		return block * a.Count
	}
	off := 0
	for j := range min(block, a.Counts.Ranks()) {
		if d.InPlace == NoInPlace {
			off += a.Counts.At(j, rank)
		} else {
			off += a.Counts.PerRank(j)
		}
	}
	return off
}

// Layout is where an in-place call puts its send and receive buffers
// within its one buffer, as nccl-tests does.
type Layout uint8

const (
	// SameStart: send and receive are the same buffer (allreduce,
	// broadcast, reduce, sendrecv, alltoall).
	SameStart Layout = iota
	// SendInRecv: send is this rank's block of the receive buffer
	// (allgather, gather).
	SendInRecv
	// RecvInSend: receive is this rank's block of the send buffer
	// (reducescatter, scatter).
	RecvInSend
	// NoInPlace: the collective has no in-place call (alltoallv, whose
	// send and receive blocks differ in length, as nccl-tests has none).
	NoInPlace
)

// Reduced is the Expected.Template of a block that holds the reduction of
// every rank's input, as dtype.Pattern.Template(-1) encodes it.
const Reduced = -1

// Expected is what one block of a rank's receive buffer must hold: the
// elements of dtype.Pattern.Template(Template) from element Offset x count
// on, count elements of them.
type Expected struct {
	// Template is the rank whose input the block is a copy of, or
	// Reduced for the reduction of all ranks' inputs.
	Template int
	// Offset is the block of that input that the block holds, in blocks
	// of count elements (0 for the first count elements).
	Offset int
}

// Blocks returns the number of count-sized blocks in the larger of a
// rank's two buffers on n ranks (the root's, for a rooted collective):
// the size a row reports is Blocks(n) x count x element size, as
// nccl-tests prints it.
func (d *Descriptor) Blocks(n int) int {
	s, r := d.Lengths(0, 0, n)
	return max(s, r)
}

// BufferBytes returns the send and receive lengths in bytes that a row of
// size bytes (a multiple of Blocks(n) x element size) takes on n ranks:
// the root's for a rooted collective, which are the largest, so buffers
// allocated at these lengths serve every rank.
func (d *Descriptor) BufferBytes(n int, size int64) (send, recv int64) {
	s, r := d.Lengths(0, 0, n)
	b := d.Blocks(n)
	// A buffer of all the blocks is size itself, even when size is not a
	// multiple of b (a fused row's bucket need not be).
	scale := func(k int) int64 {
		if k == b {
			return size
		}
		return size / int64(b) * int64(k)
	}
	return scale(s), scale(r)
}

// InPlaceCall reports whether a's buffers, on rank of n, sit as d's
// in-place layout puts them: the same start (SameStart), or one starting
// at this rank's block of the other (SendInRecv, RecvInSend). A rank whose
// send or receive side is empty (Lengths) is never in place.
func (d *Descriptor) InPlaceCall(a *Args, rank, n int) bool {
	es := a.DType.Size()
	s, r := d.Lengths(rank, a.Root, n)
	s, r = s*a.Count, r*a.Count
	if d.Variable() {
		if a.Counts == nil || a.Counts.Ranks() != n || d.InPlace == NoInPlace {
			return false
		}
		s, r = d.VLengths(rank, a.Counts)
	}
	if s == 0 || r == 0 || es == 0 || len(a.Send) < s*es || len(a.Recv) < r*es {
		return false
	}
	off := d.Offset(a, rank, rank, n) * es
	switch d.InPlace {
	case SendInRecv:
		return off < r*es && aliased(a.Send, a.Recv[off:])
	case RecvInSend:
		return off < s*es && aliased(a.Recv, a.Send[off:])
	}
	return aliased(a.Send, a.Recv)
}
