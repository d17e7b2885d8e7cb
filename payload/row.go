package payload

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// Placement says whether a collective writes over its input.
type Placement uint8

const (
	// OutOfPlace uses separate send and receive buffers.
	OutOfPlace Placement = iota + 1
	// InPlace uses overlapping buffers, as nccl-tests' in-place columns do.
	InPlace
)

// Row is one measurement of a plan: a collective call shape. The sweep
// measures rows; a step scenario lays its collectives out as rows too, so
// that both fill, lay out and check their buffers alike.
type Row struct {
	Op    coll.Op
	DType dtype.DType
	RedOp dtype.ReduceOp // 0 for collectives that do not reduce
	Root  int            // -1 for collectives without a root
	Place Placement
	// Count is the element count of coll.Args: per rank or per peer block
	// for the collectives with n blocks.
	Count int
	// Bytes is the size the row reports (see coll.Op.Blocks).
	Bytes int64
	// Group is the domain the row runs in ("" for the whole world), and
	// GroupSize the ranks in each of its groups.
	Group     string
	GroupSize int
	// Buckets > 1 splits the row into that many collectives of Count
	// elements each, back to back (--fusion); Bytes is their total.
	Buckets int
	// Counts are the element counts of a variable-size collective's call
	// (coll.Args.Counts), shared and never modified; nil for the others.
	Counts *coll.Counts
	// Algo is the algorithm the row asks for: a name or coll.Auto. With
	// several (--algo a,b), each row of the sweep comes once per
	// algorithm, the algorithms one after the other.
	Algo string
}

// RowCount returns the element count of coll.Args and the size actually
// moved when a row asks for size bytes of op on n ranks: the size rounded
// down to whole elements in whole blocks.
func RowCount(op coll.Op, dt dtype.DType, n int, size int64) (count int, bytes int64) {
	unit := int64(op.Blocks(n) * dt.Size())
	c := size / unit
	return int(c), c * unit
}
