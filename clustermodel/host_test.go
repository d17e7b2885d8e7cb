package clustermodel

import (
	"testing"

	"github.com/hccl-test/hccl-test/coll"
)

// TestHostBytes checks the bytes a rank writes per call: busbw's bytes,
// and for allgather and alltoall the block of its own too; and the bound
// a host's rate makes of them for a server of PerServer ranks.
func TestHostBytes(t *testing.T) {
	tests := []struct {
		op   coll.Op
		n    int
		size int64
		want float64
	}{
		{coll.SendRecv, 2, 128, 128},
		{coll.AllGather, 2, 128, 128},    // 64 received, 64 of its own
		{coll.AllToAll, 8, 64, 64},       // 56 received, 8 of its own
		{coll.ReduceScatter, 4, 128, 96}, // 3 blocks of 32 reduced in
		{coll.AllReduce, 4, 128, 192},    // reduced in, then gathered
	}
	for _, tc := range tests {
		if got := HostBytes(tc.op, tc.n, tc.size); got != tc.want {
			t.Errorf("HostBytes(%v, %d, %d) = %v, want %v", tc.op, tc.n, tc.size, got, tc.want)
		}
	}
	m := &Model{}
	w := World{Servers: 2, PerServer: 4}
	if got := m.HostBound(coll.AllGather, w, 1<<30); got != 0 {
		t.Errorf("no host rate: bound %v, want 0", got)
	}
	m.HostGBps = 2
	// 8 ranks: each writes the whole 1 GiB result; 4 a server.
	if got, want := m.HostBound(coll.AllGather, w, 1<<30), 4*float64(1<<30)/2e9; got != want {
		t.Errorf("bound %v s, want %v", got, want)
	}
}
