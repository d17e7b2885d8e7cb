package payload

import (
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// PatternFor returns the input pattern of a row: one whose reduction is
// exact for the row's operator (collectives that do not reduce take the sum
// pattern, which is as varied).
func PatternFor(row Row, n int) dtype.Pattern {
	op := row.RedOp
	if op == 0 {
		op = dtype.Sum
	}
	return dtype.Pattern{DType: row.DType, Op: op, Ranks: n}
}

// FillInputs writes this rank's input into the send side of a: element i of
// the send buffer holds pattern value (rank, i). Ranks that have no input
// (a send length of 0: non-roots of broadcast and scatter) fill nothing.
func FillInputs(a *coll.Args, p dtype.Pattern, rank int) { FillShifted(a, p, rank, 0) }

// FillShifted is FillInputs with the pattern shifted by shift elements:
// element i of the send buffer holds pattern value (rank, i+shift), so
// that checked runs with different shifts check different values at each
// place (CountWrongShifted checks them).
func FillShifted(a *coll.Args, p dtype.Pattern, rank, shift int) {
	if send, _ := a.Op.Desc().Lengths(rank, a.Root, p.Ranks); send == 0 {
		return
	}
	p.Fill(a.Send, rank, shift)
}

// poisonByte fills receive buffers before a checked call, so a result an
// algorithm failed to write cannot pass for a stale correct one.
const poisonByte = 0xA5

// Poison fills b with poisonByte.
func Poison(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = poisonByte
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// CountWrong returns how many elements of this rank's output differ from
// what the collective must produce (its coll.Descriptor's Expect),
// computed from the pattern alone.
func CountWrong(a *coll.Args, row Row, p dtype.Pattern, rank, n int) int64 {
	return CountWrongShifted(a, row, p, rank, n, 0)
}

// CountWrongShifted is CountWrong for inputs filled by FillShifted with
// shift.
func CountWrongShifted(a *coll.Args, row Row, p dtype.Pattern, rank, n, shift int) int64 {
	b := a.Bytes()
	var wrong int
	if d := a.Op.Desc(); d.Variable() {
		// The counts say where each stretch starts (coll.Counts).
		es, at := a.DType.Size(), 0
		for _, e := range d.VExpect(rank, a.Counts) {
			wrong += p.CountWrong(a.Recv[at*es:(at+e.Len)*es], e.Template, e.From+shift)
			at += e.Len
		}
		return int64(wrong)
	}
	for i, e := range a.Op.Desc().Expect(rank, a.Root, n) {
		wrong += p.CountWrong(a.Recv[i*b:(i+1)*b], e.Template, e.Offset*a.Count+shift)
	}
	return int64(wrong)
}
