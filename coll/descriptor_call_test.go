package coll

import (
	"testing"

	"github.com/hccl-test/hccl-test/dtype"
)

// TestDescriptorBenchAndPeers checks each collective's benchmark name and
// its peers on 1, 2, 8, 64 and 4096 ranks against values written out: the
// doubling default is min(n, 2 x bits.Len(n) + 4), alltoall's every rank.
func TestDescriptorBenchAndPeers(t *testing.T) {
	doubling := [5]int{1, 2, 8, 18, 30}
	every := [5]int{1, 2, 8, 64, 4096}
	for _, tc := range []struct {
		op    Op
		bench string
		peers [5]int // n = 1, 2, 8, 64, 4096
	}{
		{AllReduce, "AllReduce", doubling},
		{AllGather, "AllGather", doubling},
		{ReduceScatter, "ReduceScatter", doubling},
		{Broadcast, "Broadcast", doubling},
		{Reduce, "Reduce", doubling},
		{AllToAll, "AllToAll", every},
		{SendRecv, "SendRecv", doubling},
		{Gather, "Gather", doubling},
		{Scatter, "Scatter", doubling},
		{AllToAllV, "AllToAllV", every},
		{AllGatherV, "AllGatherV", doubling},
		{ReduceScatterV, "ReduceScatterV", doubling},
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			if got, ok := BenchName(tc.op.String()); !ok || got != tc.bench {
				t.Errorf("BenchName(%q) = %q, %v, want %q", tc.op, got, ok, tc.bench)
			}
			for i, n := range []int{1, 2, 8, 64, 4096} {
				if got := tc.op.Peers(n); got != tc.peers[i] {
					t.Errorf("Peers(%d) = %d, want %d", n, got, tc.peers[i])
				}
			}
		})
	}
	for _, name := range []string{"", "all_reduce", "AllReduce", "alltoallvc"} {
		if got, ok := BenchName(name); ok {
			t.Errorf("BenchName(%q) = %q, want none", name, got)
		}
	}
	if got := PeersOf(nil, 64); got != 18 {
		t.Errorf("PeersOf(none, 64) = %d, want 18", got)
	}
	if got := PeersOf([]Op{AllReduce, AllToAll, Broadcast}, 64); got != 64 {
		t.Errorf("PeersOf(allreduce, alltoall, broadcast; 64) = %d, want 64", got)
	}
}

// TestInPlaceCall checks, on rank 1 and on the root (rank 2) of 4, that
// buffers laid out as each collective's in-place call are seen in place
// except on a rank whose side of the call is empty, and that separate
// buffers, or a block of another rank, never are.
func TestInPlaceCall(t *testing.T) {
	const n, root, count = 4, 2, 3
	for _, tc := range []struct {
		op            Op
		rank1, onRoot bool // in place, laid out in place
	}{
		{AllReduce, true, true},
		{AllGather, true, true},
		{ReduceScatter, true, true},
		{Broadcast, false, true}, // rank 1 sends nothing
		{Reduce, false, true},    // rank 1 receives nothing
		{AllToAll, true, true},
		{SendRecv, true, true},
		{Gather, false, true},  // rank 1 receives nothing
		{Scatter, false, true}, // rank 1 sends nothing
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			d := tc.op.Desc()
			for _, rank := range []int{1, root} {
				want := tc.rank1
				if rank == root {
					want = tc.onRoot
				}
				a := &Args{Op: tc.op, DType: dtype.FP32, Count: count, Root: root}
				b := a.Bytes()
				// Buffers at the root's lengths, the largest, as the
				// harness allocates them for every rank.
				s, r := d.Lengths(root, root, n)
				one := make([]byte, max(s, r)*b)
				switch d.InPlace {
				case SameStart:
					a.Send, a.Recv = one[:s*b], one[:r*b]
				case SendInRecv:
					a.Recv, a.Send = one[:r*b], one[rank*b:(rank+1)*b]
				case RecvInSend:
					a.Send, a.Recv = one[:s*b], one[rank*b:(rank+1)*b]
				}
				if got := d.InPlaceCall(a, rank, n); got != want {
					t.Errorf("rank %d, in-place layout: InPlaceCall = %v, want %v", rank, got, want)
				}
				a.Send, a.Recv = make([]byte, s*b), make([]byte, r*b)
				if d.InPlaceCall(a, rank, n) {
					t.Errorf("rank %d, separate buffers: InPlaceCall = true", rank)
				}
				if d.InPlace != SameStart {
					// The block of the next rank, not this one's.
					a.Send = make([]byte, max(s, r)*b)
					a.Recv = a.Send
					if d.InPlace == SendInRecv {
						a.Send = a.Recv[((rank+1)%n)*b:]
					} else {
						a.Recv = a.Send[((rank+1)%n)*b:]
					}
					if d.InPlaceCall(a, rank, n) {
						t.Errorf("rank %d, another rank's block: InPlaceCall = true", rank)
					}
				}
				a.Count = 0
				if d.InPlaceCall(a, rank, n) {
					t.Errorf("rank %d, count 0: InPlaceCall = true", rank)
				}
			}
		})
	}
}
