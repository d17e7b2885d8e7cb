//go:build mpi && cgo

package mpi

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
)

// TestVLens: the elements a variable-size MPI call may touch are the ends
// of the blocks it is given, on 3 ranks, and arrays that would take MPI
// outside the buffers, or that it cannot take, are refused in one line.
func TestVLens(t *testing.T) {
	const big = maxCount - 1
	tests := []struct {
		name       string
		call       backends.NativeCall
		rank       int
		send, recv int
		err        string // "" when accepted
	}{
		{"alltoallv", backends.NativeCall{Op: "alltoallv",
			SendCounts: []int{3, 0, 4}, SendDispls: []int{0, 3, 3}, RecvCounts: []int{2, 0, 6}, RecvDispls: []int{0, 2, 2}}, 1, 7, 8, ""},
		{"alltoallv, gaps and a block out of order", backends.NativeCall{Op: "alltoallv",
			SendCounts: []int{1, 0, 2}, SendDispls: []int{10, 0, 3}, RecvCounts: []int{0, 0, 0}, RecvDispls: []int{0, 0, 0}}, 0, 11, 0, ""},
		{"allgatherv", backends.NativeCall{Op: "allgatherv", RecvCounts: []int{9, 8, 11}, RecvDispls: []int{0, 9, 17}}, 2, 11, 28, ""},
		{"allgatherv, an empty block", backends.NativeCall{Op: "allgatherv", RecvCounts: []int{9, 0, 11}, RecvDispls: []int{0, 9, 9}}, 1, 0, 20, ""},
		{"reducescatterv", backends.NativeCall{Op: "reducescatterv", SendCounts: []int{9, 8, 11}, SendDispls: []int{0, 9, 17}}, 1, 28, 8, ""},
		{"reducescatterv in place", backends.NativeCall{Op: "reducescatterv", InPlace: true, SendCounts: []int{9, 8, 11}, SendDispls: []int{0, 9, 17}}, 0, 28, 9, ""},
		{"not variable", backends.NativeCall{Op: "alltoall"}, 0, 0, 0, `"alltoall" is not a variable-size collective`},
		{"alltoallv in place", backends.NativeCall{Op: "alltoallv", InPlace: true}, 0, 0, 0, "alltoallv has no in-place call"},
		{"missing side", backends.NativeCall{Op: "allgatherv", SendCounts: []int{1, 1, 1}, SendDispls: []int{0, 1, 2}}, 0, 0, 0,
			"0 receive counts and 0 displacements for 3 ranks"},
		{"short arrays", backends.NativeCall{Op: "alltoallv", SendCounts: []int{1, 1}, SendDispls: []int{0, 1}}, 0, 0, 0,
			"2 send counts and 2 displacements for 3 ranks"},
		{"negative count", backends.NativeCall{Op: "allgatherv", RecvCounts: []int{1, -1, 1}, RecvDispls: []int{0, 1, 2}}, 0, 0, 0,
			"receive block 1: -1 elements at element 1"},
		{"negative displacement", backends.NativeCall{Op: "reducescatterv", SendCounts: []int{1, 1, 1}, SendDispls: []int{0, -1, 2}}, 0, 0, 0,
			"send block 1: 1 elements at element -1"},
		{"past int", backends.NativeCall{Op: "allgatherv", RecvCounts: []int{1, 2, 1}, RecvDispls: []int{0, big, 2}}, 0, 0, 0,
			"receive block 1: 2 elements at element 2147483646 end past MPI's int count (2147483647)"},
		{"reducescatterv out of order", backends.NativeCall{Op: "reducescatterv", SendCounts: []int{2, 1, 1}, SendDispls: []int{0, 3, 2}}, 0, 0, 0,
			"send block 1 at element 3, not 2: MPI_Reduce_scatter takes the blocks one after another"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			send, recv, err := vLens(tt.call, tt.rank, 3)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || send != tt.send || recv != tt.recv {
				t.Errorf("vLens = %d, %d, %v; want %d, %d", send, recv, err, tt.send, tt.recv)
			}
		})
	}
}
