package coll

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// nativeRecorder is a transport with collectives of its own that records
// the calls handed to it; it moves no bytes.
type nativeRecorder struct {
	backends.Transport // nil: runNative uses nothing else
	rank, size         int
	calls              []backends.NativeCall
}

func (r *nativeRecorder) Rank() int { return r.rank }
func (r *nativeRecorder) Size() int { return r.size }

func (r *nativeRecorder) RunNative(_ context.Context, call backends.NativeCall) error {
	r.calls = append(r.calls, call)
	return nil
}

// TestNativeVariableCall: a variable-size call reaches the backend with
// MPI's per-rank counts and displacements, written out by hand for the
// matrix of TestDescriptorVariable (columns 9 8 11), on the sides that
// hold one block per rank, and none on a side of one block.
//
//	c = 1 2 0
//	    3 0 4
//	    5 6 7
func TestNativeVariableCall(t *testing.T) {
	c, err := NewCounts(3, []int{1, 2, 0, 3, 0, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op                   Op
		rank                 int
		sc, sd, rc, rd       []int
		sendElems, recvElems int
	}{
		{AllToAllV, 1, []int{3, 0, 4}, []int{0, 3, 3}, []int{2, 0, 6}, []int{0, 2, 2}, 7, 8},
		{AllToAllV, 2, []int{5, 6, 7}, []int{0, 5, 11}, []int{0, 4, 7}, []int{0, 0, 4}, 18, 11},
		{AllGatherV, 0, nil, nil, []int{9, 8, 11}, []int{0, 9, 17}, 9, 28},
		{ReduceScatterV, 2, []int{9, 8, 11}, []int{0, 9, 17}, nil, nil, 28, 11},
	}
	for _, tt := range tests {
		rec := &nativeRecorder{rank: tt.rank, size: 3}
		a := &Args{Op: tt.op, DType: dtype.FP32, RedOp: dtype.Sum, Count: 4, Counts: c,
			Send: make([]byte, 4*tt.sendElems), Recv: make([]byte, 4*tt.recvElems)}
		if err := runNative(context.Background(), NewComm(rec), a); err != nil {
			t.Fatalf("%v rank %d: %v", tt.op, tt.rank, err)
		}
		got := rec.calls[0]
		if !got.Variable || got.Op != tt.op.String() || got.InPlace {
			t.Errorf("%v rank %d: call %q variable %v in place %v", tt.op, tt.rank, got.Op, got.Variable, got.InPlace)
		}
		for _, f := range []struct {
			name      string
			got, want []int
		}{{"SendCounts", got.SendCounts, tt.sc}, {"SendDispls", got.SendDispls, tt.sd},
			{"RecvCounts", got.RecvCounts, tt.rc}, {"RecvDispls", got.RecvDispls, tt.rd}} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%v rank %d: %s %v, want %v", tt.op, tt.rank, f.name, f.got, f.want)
			}
		}
	}
}

// TestNativeBlocksAgree: on random matrices of 1 to 6 ranks with empty
// pairs, the blocks handed to the backend are the descriptors' own: the
// lengths of VLengths, the in-place offsets of Offset, and for alltoallv
// the sender's displacement that the check expects its block from
// (VExpect); a side of one block is this rank's count on the other.
func TestNativeBlocksAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	for n := 1; n <= 6; n++ {
		cells := make([]int, n*n)
		for i := range cells {
			if rng.IntN(3) > 0 { // a third of the pairs send nothing
				cells[i] = rng.IntN(50)
			}
		}
		c, err := NewCounts(n, cells)
		if err != nil {
			t.Fatal(err)
		}
		a := &Args{Count: 1, Counts: c}
		for _, op := range []Op{AllToAllV, AllGatherV, ReduceScatterV} {
			d := op.Desc()
			a.Op = op
			for r := range n {
				send, recv, err := nativeBlocks(a, r)
				if err != nil {
					t.Fatalf("%v: %v", op, err)
				}
				wantS, wantR := d.VLengths(r, c)
				if s, rr := blocksLen(send, recv, r); s != wantS || rr != wantR {
					t.Errorf("%v n %d rank %d: blocks of %d and %d elements, VLengths %d and %d", op, n, r, s, rr, wantS, wantR)
				}
				// The side of one block per rank where Offset lays them.
				blocked := recv
				if send != nil && recv == nil {
					blocked = send
				}
				for j, b := range blocked {
					if off := d.Offset(a, r, j, n); b.Off != off {
						t.Errorf("%v n %d rank %d: block %d at %d, Offset %d", op, n, r, j, b.Off, off)
					}
				}
				if op != AllToAllV {
					continue
				}
				for s, e := range d.VExpect(r, c) {
					from, _, _ := nativeBlocks(a, s)
					if from[r].Off != e.From || from[r].Len != e.Len || recv[s].Len != e.Len {
						t.Errorf("n %d: rank %d's block to %d at %v, %d long at the receiver; expected from %d, %d long", n, s, r, from[r], recv[s].Len, e.From, e.Len)
					}
				}
			}
		}
	}
	if _, _, err := nativeBlocks(&Args{Op: AllReduce}, 0); err == nil {
		t.Error("allreduce: blocks of a fixed-size collective, want an error")
	}
}

// TestNativeVariableInPlace: an in-place variable-size call, its one
// buffer laid out as the harness lays it (rank 1's block at offset 9 of
// the matrix of TestNativeVariableCall), reaches the backend marked in
// place, its displacements putting rank 1's block where the other side
// starts; a send buffer elsewhere is not in place.
func TestNativeVariableInPlace(t *testing.T) {
	c, err := NewCounts(3, []int{1, 2, 0, 3, 0, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []Op{AllGatherV, ReduceScatterV} {
		whole := make([]byte, 4*28)
		mine := whole[4*9 : 4*17]
		a := &Args{Op: op, DType: dtype.FP32, RedOp: dtype.Sum, Count: 4, Counts: c, Send: mine, Recv: whole}
		if op == ReduceScatterV {
			a.Send, a.Recv = whole, mine
		}
		rec := &nativeRecorder{rank: 1, size: 3}
		if err := runNative(context.Background(), NewComm(rec), a); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		a.Send = append([]byte(nil), a.Send...) // out of place
		if err := runNative(context.Background(), NewComm(rec), a); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		in, out := rec.calls[0], rec.calls[1]
		displs := in.RecvDispls
		if op == ReduceScatterV {
			displs = in.SendDispls
		}
		if !in.InPlace || out.InPlace || displs[1] != 9 {
			t.Errorf("%v: in place %v, out of place %v, rank 1's block at %v; want true, false, 9", op, in.InPlace, out.InPlace, displs)
		}
	}
}

// blocksLen returns the elements rank's send and receive sides span, a
// side without blocks taking this rank's block of the other.
func blocksLen(send, recv []Span, rank int) (s, r int) {
	end := func(b []Span) int {
		e := 0
		for _, x := range b {
			e = max(e, x.Off+x.Len)
		}
		return e
	}
	s, r = end(send), end(recv)
	if send == nil {
		s = recv[rank].Len
	}
	if recv == nil {
		r = send[rank].Len
	}
	return s, r
}
