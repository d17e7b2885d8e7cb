package bench

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// patternFor returns the input pattern of a row: one whose reduction is
// exact for the row's operator (collectives that do not reduce take the sum
// pattern, which is as varied).
func patternFor(row Row, n int) dtype.Pattern {
	op := row.RedOp
	if op == 0 {
		op = dtype.Sum
	}
	return dtype.Pattern{DType: row.DType, Op: op, Ranks: n}
}

// fillInputs writes this rank's input into the send side of a: element i of
// the send buffer holds pattern value (rank, i). Ranks that have no input
// (non-roots of broadcast and scatter) fill nothing.
func fillInputs(a *coll.Args, p dtype.Pattern, rank int) {
	if (a.Op == coll.Broadcast || a.Op == coll.Scatter) && rank != a.Root {
		return
	}
	p.Fill(a.Send, rank, 0)
}

// poisonByte fills receive buffers before a checked call, so a result an
// algorithm failed to write cannot pass for a stale correct one.
const poisonByte = 0xA5

func poison(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = poisonByte
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// countWrong returns how many elements of this rank's output differ from
// what the collective must produce, computed from the pattern alone.
func countWrong(a *coll.Args, row Row, p dtype.Pattern, rank, n int) int64 {
	b := a.Bytes()
	dt := a.DType
	blk := func(buf []byte, i int) []byte { return buf[i*b : (i+1)*b] }
	var wrong int
	switch a.Op {
	case coll.AllReduce:
		wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template(-1), 0)
	case coll.Reduce:
		if rank == a.Root {
			wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template(-1), 0)
		}
	case coll.ReduceScatter:
		wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template(-1), rank*a.Count)
	case coll.Broadcast:
		wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template(a.Root), 0)
	case coll.SendRecv:
		wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template((rank-1+n)%n), 0)
	case coll.AllGather, coll.Gather:
		if a.Op == coll.Gather && rank != a.Root {
			break
		}
		for j := range n {
			wrong += dtype.CountWrong(dt, blk(a.Recv, j), p.Template(j), 0)
		}
	case coll.AllToAll:
		for j := range n {
			wrong += dtype.CountWrong(dt, blk(a.Recv, j), p.Template(j), rank*a.Count)
		}
	case coll.Scatter:
		wrong = dtype.CountWrong(dt, a.Recv[:b], p.Template(a.Root), rank*a.Count)
	}
	return int64(wrong)
}
