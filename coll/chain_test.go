package coll

import (
	"bytes"
	"context"
	"math"
	"testing"

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
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
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

// TestChainLevelCosts: the chain's two-level costs on 2 servers of 4 (root
// 0), written out from the messages: its hop from rank 3 to rank 4
// crosses servers.
func TestChainLevelCosts(t *testing.T) {
	const (
		ai, bi = 1e-6, 1e-9 // inside a server
		ae, be = 1e-5, 4e-9 // between servers
		g, cp  = 2e-9, 3e-9 // reduction, copy
		b      = 1 << 20    // the vector; a block for gather and scatter
		sigma  = b / 8.0    // a chain's segment: 8 of them
	)
	m := Model{Alpha: ai, Beta: bi, Gamma: g, Copy: cp, PerServer: 4, InterAlpha: ae, InterBeta: be}
	hopI, hopE := ai+b*bi, ae+b*be // one block or vector over each link
	segI, segE := ai+sigma*bi, ae+sigma*be
	tests := []struct {
		op   Op
		name string
		want float64
	}{
		// One hop across, six inside, seven segments queued behind the
		// first at rank 3, which sends across.
		{Broadcast, "ring", max(segE+6*segI+7*sigma*be, b*bi+b*cp)},
		{Reduce, "ring", ae + sigma*(be+g) + 6*(ai+sigma*(bi+g)) + 7*sigma*max(be, g)},
		// Every block hops all the way, or rank 4 sends its own and the
		// three from beyond it across back to back and the last hops on.
		{Gather, "ring", max(hopE+6*hopI, hopE+3*hopI+3*b*be, b*cp)},
		{Scatter, "ring", b*cp + max(hopE+6*hopI, hopE+3*hopI+3*b*be)},
	}
	for _, tc := range tests {
		if got := Predict(tc.op, tc.name, 8, b, m); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%v %s: %g, want %g", tc.op, tc.name, got, tc.want)
		}
	}
}
