package coll

import (
	"reflect"
	"strings"
	"testing"
)

// TestDescriptorVariable checks the variable-size collectives' lengths,
// expectations and offsets on one matrix of 3 ranks, written out by hand:
//
//	c = 1 2 0     columns p = 9 8 11, total 28
//	    3 0 4
//	    5 6 7
func TestDescriptorVariable(t *testing.T) {
	c, err := NewCounts(3, []int{1, 2, 0, 3, 0, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op         Op
		rank       int
		send, recv int
		expect     []VExpected
	}{
		{AllToAllV, 0, 3, 9, []VExpected{{0, 0, 1}, {1, 0, 3}, {2, 0, 5}}},
		{AllToAllV, 1, 7, 8, []VExpected{{0, 1, 2}, {1, 3, 0}, {2, 5, 6}}},
		{AllToAllV, 2, 18, 11, []VExpected{{0, 3, 0}, {1, 3, 4}, {2, 11, 7}}},
		{AllGatherV, 1, 8, 28, []VExpected{{0, 0, 9}, {1, 0, 8}, {2, 0, 11}}},
		{ReduceScatterV, 0, 28, 9, []VExpected{{Reduced, 0, 9}}},
		{ReduceScatterV, 2, 28, 11, []VExpected{{Reduced, 17, 11}}},
	}
	for _, tt := range tests {
		d := tt.op.Desc()
		if !d.Variable() {
			t.Fatalf("%v: not variable", tt.op)
		}
		if s, r := d.VLengths(tt.rank, c); s != tt.send || r != tt.recv {
			t.Errorf("%v rank %d: lengths (%d, %d), want (%d, %d)", tt.op, tt.rank, s, r, tt.send, tt.recv)
		}
		if got := d.VExpect(tt.rank, c); !reflect.DeepEqual(got, tt.expect) {
			t.Errorf("%v rank %d: expect %v, want %v", tt.op, tt.rank, got, tt.expect)
		}
	}
	a := &Args{Count: 100, Counts: c}
	for _, tt := range []struct {
		op                Op
		rank, block, want int
	}{
		{AllGatherV, 2, 2, 17}, {AllGatherV, 0, 3, 28}, {ReduceScatterV, 1, 1, 9},
		{AllToAllV, 1, 2, 2}, {AllReduce, 1, 2, 200},
	} {
		if got := tt.op.Desc().Offset(a, tt.rank, tt.block, 3); got != tt.want {
			t.Errorf("%v: Offset(rank %d, block %d) = %d, want %d", tt.op, tt.rank, tt.block, got, tt.want)
		}
	}
	for _, op := range []Op{AllReduce, AllToAll, Scatter} {
		if op.Desc().Variable() {
			t.Errorf("%v: variable", op)
		}
	}
}

// TestNewCountsRefuses: counts that no call can take are refused in one
// line, and equal counts have equal digests, different ones different.
func TestNewCountsRefuses(t *testing.T) {
	for _, tt := range []struct {
		n     int
		cells []int
		want  string
	}{
		{0, nil, "counts of 0 ranks"},
		{MaxCountRanks + 1, nil, "want 1 to 4096"},
		{2, []int{1, 2, 3}, "3 cells, want 4"},
		{2, []int{1, 2, -3, 4}, "-3 elements from rank 1 to rank 0"},
	} {
		_, err := NewCounts(tt.n, tt.cells)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("NewCounts(%d, %v): %v, want one line with %q", tt.n, tt.cells, err, tt.want)
		}
	}
	a, _ := NewCounts(2, []int{1, 2, 3, 4})
	b, _ := NewCounts(2, []int{1, 2, 3, 4})
	d, _ := NewCounts(2, []int{1, 2, 4, 3})
	if a.Digest() != b.Digest() || a.Digest() == d.Digest() {
		t.Errorf("digests %x %x %x: want the first two equal, the third apart", a.Digest(), b.Digest(), d.Digest())
	}
}
