package coll

import (
	"bytes"
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// Tests of rhd, rd allgather, dbtree, oneshot, twoshot and bruck all-to-all
// beyond what the conformance suite's small counts reach.

// TestDBTreePipelined runs dbtree with halves of many segments, which the
// conformance suite's small counts never reach: on a shallow and a deep
// pair of trees, from the first and the last root, in and out of place.
// Each world size runs each op twice, the second time in place (from the
// last root for rooted ops), not every root by every placement: the calls
// are megabytes each, and the capped case (17 MiB a buffer) runs each op
// once, its roots and placements being the other cases'. The cases run one
// after another: side by side they only share the same cores.
func TestDBTreePipelined(t *testing.T) {
	seg := func(dt dtype.DType) int { return dbtreeMinSegment / dt.Size() } // elements in the smallest segment
	for _, tc := range []struct {
		name  string
		dt    dtype.DType
		redop dtype.ReduceOp
		count int
		ranks []int
		once  bool // one call per op: out of place for allreduce, in place from the last root otherwise
	}{
		{"two segments a half fp32 sum", dtype.FP32, dtype.Sum, 2*2*seg(dtype.FP32) + 1, []int{2, 3, 8}, false},
		{"three segments a half fp16 avg", dtype.FP16, dtype.Avg, 2*3*seg(dtype.FP16) + 5, []int{3, 8}, false},
		{"five segments a half int32 max", dtype.Int32, dtype.Max, 2*5*seg(dtype.Int32) + 3, []int{5}, false},
		{"capped segments fp64 sum", dtype.FP64, dtype.Sum, 2*(dbtreeMaxSegments+1)*seg(dtype.FP64) + 7, []int{5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []Op{AllReduce, Broadcast, Reduce} {
				for _, n := range tc.ranks {
					type place struct {
						root    int
						inPlace bool
					}
					last := place{0, true}
					if op.Rooted() {
						last.root = n - 1
					}
					places := []place{{0, false}, last}
					if tc.once {
						places = places[:1]
						if op.Rooted() {
							places = places[1:]
						}
					}
					for _, p := range places {
						runLarge(t, call{op: op, algo: "dbtree", ranks: n, count: tc.count, dt: tc.dt,
							redop: tc.redop, root: p.root, inPlace: p.inPlace})
					}
				}
			}
		})
	}
}

// runLarge runs an allreduce, broadcast or reduce call c and checks the
// results a period of the pattern at a time, which is fast enough for large
// counts where call.run's element-wise expectation is not.
func runLarge(t *testing.T, c call) {
	t.Helper()
	p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
	want := p.Template(-1)
	if c.op == Broadcast {
		want = p.Template(c.root)
	}
	// A call of 17 MiB buffers under the race detector took past callHang
	// on a host loaded 20 times over, every rank progressing: the hang
	// guard of these calls is the test binary's own deadline.
	ctx := t.Context()
	if end, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
	}
	endpoints := c.world(t, ctx)
	recvs := make([][]byte, c.ranks)
	errs := make([]error, c.ranks)
	var wg sync.WaitGroup
	for r := range c.ranks {
		send, recv := c.buffers(p, r)
		recvs[r] = recv
		wg.Go(func() {
			_, errs[r] = NewComm(endpoints[r]).Run(ctx, c.algo, &Args{Op: c.op, DType: c.dt, RedOp: c.redop,
				Count: c.count, Root: c.root, Send: send, Recv: recv})
		})
	}
	wg.Wait()
	for r, got := range recvs {
		if errs[r] != nil {
			t.Fatalf("%v: rank %d: %v", c, r, errs[r])
		}
		if c.op == Reduce && r != c.root {
			continue
		}
		if wrong := dtype.CountWrong(c.dt, got[:c.count*c.dt.Size()], want, 0); wrong > 0 {
			t.Fatalf("%v: rank %d: %d elements wrong", c, r, wrong)
		}
	}
}

// TestNewAlgosOverTCPLarge runs the new algorithms over sockets with
// buffers far larger than a socket's, so that a receive posted late, or a
// pipeline step out of order, would stall a link for good.
func TestNewAlgosOverTCPLarge(t *testing.T) {
	large := 2*3*dbtreeMinSegment/4 + 1 // three dbtree segments a half, in fp32
	for op, names := range newAlgos {
		for _, algo := range names {
			t.Run(op.String()+"/"+algo, func(t *testing.T) {
				t.Parallel()
				for _, n := range []int{4, 5} {
					c := call{op: op, algo: algo, ranks: n, count: large, dt: dtype.FP32, redop: dtype.Sum,
						root: 1, backend: "tcp"}
					switch op {
					case AllReduce, Broadcast, Reduce:
						runLarge(t, c)
					default:
						c.count = large / n
						c.run(t)
					}
				}
			})
		}
	}
}

// TestDBTreeSegments checks the segment count of a half against sizes
// worked out by hand.
func TestDBTreeSegments(t *testing.T) {
	for _, tc := range []struct {
		count, es, parts int
	}{
		{0, 4, 1},
		{dbtreeMinSegment/4 - 1, 4, 1},
		{2 * dbtreeMinSegment / 4, 4, 2},
		{1 << 22, 4, dbtreeMaxSegments},
	} {
		h := newDBHalf(dbTree{n: 4}, 1, 0, tc.count, tc.es)
		if h.seg.parts != tc.parts {
			t.Errorf("count %d of %d bytes: %d segments, want %d", tc.count, tc.es, h.seg.parts, tc.parts)
		}
		if k, _, _ := dbtreeShape(4, float64(2*tc.count*tc.es), true, true); int(k) != tc.parts {
			t.Errorf("count %d of %d bytes: the cost model assumes %v segments, want %d", tc.count, tc.es, k, tc.parts)
		}
	}
	// On 2 ranks a rooted call crosses one hop and takes one segment;
	// allreduce, up and back down, is still pipelined, as is a rooted
	// call on 3 ranks, whose tree B is two deep.
	half := 16 << 20
	for _, tc := range []struct {
		n        int
		up, down bool
		parts    int
	}{
		{2, true, false, 1},
		{2, false, true, 1},
		{2, true, true, dbtreeMaxSegments},
		{3, true, false, dbtreeMaxSegments},
		{3, false, true, dbtreeMaxSegments},
	} {
		if got := dbtreeSegments(tc.n, half, tc.up, tc.down); got != tc.parts {
			t.Errorf("%d ranks, up %v, down %v: %d segments, want %d", tc.n, tc.up, tc.down, got, tc.parts)
		}
		if k, _, _ := dbtreeShape(tc.n, float64(2*half), tc.up, tc.down); int(k) != tc.parts {
			t.Errorf("%d ranks, up %v, down %v: the cost model assumes %v segments, want %d", tc.n, tc.up, tc.down, k, tc.parts)
		}
	}
}

// TestDBTreeRootOnlyBuffers gives non-roots no buffer where only the root
// has one.
func TestDBTreeRootOnlyBuffers(t *testing.T) {
	for _, op := range []Op{Broadcast, Reduce} {
		for _, n := range []int{2, 3, 6} {
			for _, root := range []int{0, n - 1} {
				c := call{op: op, algo: "dbtree", ranks: n, count: 2*dbtreeMinSegment/4*3 + 1, dt: dtype.Int32,
					redop: dtype.Sum, root: root}
				t.Run(c.String(), func(t *testing.T) { runRootOnly(t, c) })
			}
		}
	}
}

// newAlgos lists the algorithms added here by collective.
var newAlgos = map[Op][]string{
	AllReduce:     {"rhd", "dbtree", "oneshot", "twoshot"},
	ReduceScatter: {"rhd"},
	AllGather:     {"rd"},
	Broadcast:     {"dbtree"},
	Reduce:        {"dbtree"},
	AllToAll:      {"bruck"},
}

// TestNilBuffersAtCountZero runs every new algorithm with no buffers at
// all, which count 0 allows: no rank may fail, hang or skip a message.
func TestNilBuffersAtCountZero(t *testing.T) {
	for op, names := range newAlgos {
		for _, algo := range names {
			for _, n := range []int{1, 2, 3, 6} {
				runRanks(t, n, func(ctx context.Context, c *Comm) error {
					_, err := c.Run(ctx, algo, &Args{Op: op, DType: dtype.FP32, RedOp: dtype.Sum, Root: n - 1})
					return err
				})
			}
		}
	}
}

// TestAllReduceBitwiseAgreement sums inexact floats, where the order of
// additions shows in the result, and requires every rank to end with the
// same bits. oneshot's result must also be the left-to-right sum in rank
// order, bit for bit.
func TestAllReduceBitwiseAgreement(t *testing.T) {
	for _, count := range []int{257, 3*dbtreeMinSegment/8 + 5} {
		for _, n := range []int{2, 3, 5, 6, 7, 8} {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(count)))
			sends := make([][]byte, n)
			for r := range n {
				sends[r] = make([]byte, 8*count)
				for i := range count {
					dtype.Encode(dtype.FP64, sends[r], i, math.Ldexp(rng.Float64(), rng.IntN(60)-30))
				}
			}
			inOrder := bytes.Clone(sends[0])
			for r := 1; r < n; r++ {
				dtype.Reducer(dtype.FP64, dtype.Sum)(inOrder, inOrder, sends[r])
			}
			for _, algo := range newAlgos[AllReduce] {
				recvs := make([][]byte, n)
				runRanks(t, n, func(ctx context.Context, c *Comm) error {
					recvs[c.Rank()] = make([]byte, 8*count)
					_, err := c.Run(ctx, algo, &Args{Op: AllReduce, DType: dtype.FP64,
						RedOp: dtype.Sum, Count: count, Send: sends[c.Rank()], Recv: recvs[c.Rank()]})
					return err
				})
				for r := range n {
					if !bytes.Equal(recvs[r], recvs[0]) {
						t.Errorf("%s n=%d count=%d: rank %d's result differs from rank 0's", algo, n, count, r)
					}
				}
				if algo == "oneshot" && !bytes.Equal(recvs[0], inOrder) {
					t.Errorf("oneshot n=%d count=%d: not the sum in rank order", n, count)
				}
			}
		}
	}
}

// runRanks runs body on every rank of a fresh shm world of n ranks and
// fails t with the first error.
func runRanks(t *testing.T, n int, body func(ctx context.Context, c *Comm) error) {
	t.Helper()
	w := shm.NewWorld(n)
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { errs[r] = body(ctx, NewComm(w.Endpoint(r))) })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("n=%d rank %d: %v", n, r, err)
		}
	}
}

// TestBruckBlocksSent checks the closed form against counting bits.
func TestBruckBlocksSent(t *testing.T) {
	for n := 1; n <= 300; n++ {
		want := 0
		for i := range n {
			want += bits.OnesCount(uint(i))
		}
		if got := bruckBlocksSent(n); got != want {
			t.Errorf("bruckBlocksSent(%d) = %d, want %d", n, got, want)
		}
	}
}
