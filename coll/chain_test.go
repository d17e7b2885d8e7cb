package coll

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestChainSegmenter checks the segment count against sizes worked out by
// hand, and that the segments tile the buffer in whole elements.
func TestChainSegmenter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		count, es int
		parts     int
	}{
		{"empty", 0, 4, 1},
		{"one element", 1, 8, 1},
		{"exactly the minimum", 4096, 4, 1},
		{"just under two minimums", 8191, 4, 1},
		{"two minimums", 8192, 4, 2},
		{"uneven fp16", 40000, 2, 4},
		{"large", 1 << 20, 4, 8},
		{"large odd int8", 1<<20 + 3, 1, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newChainSegmenter(tc.count, tc.es)
			if g.parts != tc.parts {
				t.Fatalf("parts = %d, want %d", g.parts, tc.parts)
			}
			buf := make([]byte, tc.count*tc.es)
			end := 0
			for i := range g.parts {
				s := g.of(buf, i)
				if g.parts > 1 && len(s) < chainMinSegment {
					t.Errorf("segment %d: %d bytes, under the minimum", i, len(s))
				}
				if len(s)%tc.es != 0 {
					t.Errorf("segment %d: %d bytes, not whole elements", i, len(s))
				}
				end += len(s)
			}
			if end != len(buf) {
				t.Errorf("segments cover %d bytes of %d", end, len(buf))
			}
			if g.of(buf, -1) != nil || g.of(buf, g.parts) != nil {
				t.Error("a step outside the pipeline got a segment")
			}
		})
	}
}

// TestChainPipelined runs the segmented chains with buffers of several
// segments, which the conformance suite's small counts never reach.
func TestChainPipelined(t *testing.T) {
	const minElems = chainMinSegment / 4 // fp32 elements in the smallest segment
	for _, tc := range []struct {
		name  string
		dt    dtype.DType
		redop dtype.ReduceOp
		count int
	}{
		{"two segments fp32 sum", dtype.FP32, dtype.Sum, 2*minElems + 1},
		{"eight segments fp32 sum", dtype.FP32, dtype.Sum, 8*minElems*2 + 7},
		{"three segments fp16 avg", dtype.FP16, dtype.Avg, 6*minElems + 5},
		{"five segments int8 max", dtype.Int8, dtype.Max, 20*minElems + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, op := range []Op{Broadcast, Reduce} {
				for _, n := range []int{2, 3, 5} {
					for _, root := range []int{0, n - 1} {
						for _, inPlace := range []bool{false, true} {
							call{op: op, algo: "ring", ranks: n, count: tc.count, dt: tc.dt,
								redop: tc.redop, root: root, inPlace: inPlace}.run(t)
						}
					}
				}
			}
		})
	}
}

// TestRootOnlyBuffers gives non-root ranks no buffer where the conventions
// say only the root has one (broadcast and scatter input, reduce and gather
// output), which the conformance suite's full-size buffers never try.
func TestRootOnlyBuffers(t *testing.T) {
	for _, op := range []Op{Broadcast, Reduce, Gather, Scatter} {
		for _, algo := range []string{"ring", "tree"} {
			for _, n := range []int{2, 3, 5} {
				for _, root := range []int{0, n - 1} {
					c := call{op: op, algo: algo, ranks: n, count: 33, dt: dtype.Int32, redop: dtype.Sum, root: root}
					t.Run(c.String(), func(t *testing.T) { runRootOnly(t, c) })
				}
			}
		}
	}
}

// runRootOnly runs c with the root-only buffers of non-roots set to nil and
// checks the buffers that remain.
func runRootOnly(t *testing.T, c call) {
	p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	send, recv := make([][]byte, c.ranks), make([][]byte, c.ranks)
	for r := range c.ranks {
		send[r], recv[r] = c.buffers(p, r)
		switch {
		case r == c.root:
		case c.op == Broadcast || c.op == Scatter:
			send[r] = nil
		case c.op == Reduce || c.op == Gather:
			recv[r] = nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := shm.Backend{}.Run(ctx, backends.Config{Ranks: c.ranks}, func(ctx context.Context, tr backends.Transport) error {
		r := tr.Rank()
		_, err := NewComm(tr).Run(ctx, c.algo, &Args{
			Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Root: c.root, Send: send[r], Recv: recv[r],
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range c.ranks {
		if want := c.expected(p, r); want != nil && !bytes.Equal(recv[r][:len(want)], want) {
			t.Errorf("rank %d: got %v, want %v", r, recv[r][:len(want)], want)
		}
	}
}
