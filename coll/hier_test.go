package coll

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
)

// hierWorld is a world of ranks laid out on servers, on which a test runs
// a sequence of calls with one Comm per rank.
type hierWorld struct {
	backend   string // "" (shm), "tcp" or "proc"
	ranks     int
	perServer int    // SetTopology's argument on every rank
	model     *Model // set on every rank (after the topology) when not nil
	barriers  bool   // a barrier before every call
}

// run makes every call of calls on every rank in order, checks each
// rank's results against call.expected, that out-of-place inputs are left
// alone, that the algorithm asked for ran (hier for auto), that each call
// took one call number of the parent Comm and none of its levels', and
// that the levels' waits count as the parent's.
func (w hierWorld) run(t *testing.T, calls []call) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callHang)
	defer cancel()
	wctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	endpoints := call{ranks: w.ranks, backend: w.backend}.world(t, ctx)
	pats := make([]dtype.Pattern, len(calls))
	sends, recvs, inputs := make([][][]byte, len(calls)), make([][][]byte, len(calls)), make([][][]byte, len(calls))
	for i, c := range calls {
		if c.ranks != w.ranks {
			t.Fatalf("%v in a world of %d", c, w.ranks)
		}
		pats[i] = dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
		if !c.op.Reduces() {
			pats[i].Op = dtype.Sum
		}
		sends[i], recvs[i], inputs[i] = make([][]byte, w.ranks), make([][]byte, w.ranks), make([][]byte, w.ranks)
		for r := range w.ranks {
			sends[i][r], recvs[i][r] = c.buffers(pats[i], r)
			inputs[i][r] = bytes.Clone(sends[i][r])
		}
	}
	errs := make([]error, w.ranks)
	var wg sync.WaitGroup
	for r := range w.ranks {
		wg.Go(func() {
			errs[r] = w.rank(wctx, NewComm(endpoints[r]), calls, sends, recvs)
			if errs[r] != nil {
				abort(errs[r])
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("ranks=%d perServer=%d %s: rank %d: %v", w.ranks, w.perServer, w.backend, r, err)
		}
	}
	for i, c := range calls {
		for r := range w.ranks {
			want := c.expected(pats[i], r)
			if got := recvs[i][r]; len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
				t.Fatalf("%v perServer=%d: rank %d: got\n%v\nwant\n%v", c, w.perServer, r, got, want)
			}
			if !c.inPlace && !bytes.Equal(sends[i][r], inputs[i][r]) {
				t.Fatalf("%v perServer=%d: rank %d: the input was written", c, w.perServer, r)
			}
		}
	}
}

// rank is what run does on one rank.
func (w hierWorld) rank(ctx context.Context, comm *Comm, calls []call, sends, recvs [][][]byte) error {
	if err := comm.SetTopology(w.perServer); err != nil {
		return err
	}
	if w.model != nil {
		comm.SetModel(*w.model)
	}
	r, want := comm.Rank(), uint64(0)
	for i, c := range calls {
		if w.barriers {
			if err := comm.Barrier(ctx); err != nil {
				return err
			}
			want++
		}
		var counts *Counts
		if c.op.Desc().Variable() {
			counts = c.testCounts()
		}
		used, err := comm.Run(ctx, c.algo, &Args{Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count,
			Root: c.root, Send: sends[i][r], Recv: recvs[i][r], Counts: counts})
		if err != nil {
			return fmt.Errorf("%v: %w", c, err)
		}
		if wantAlgo := c.algo; wantAlgo != used && (wantAlgo != Auto || used != hierName) {
			return fmt.Errorf("%v: ran %s", c, used)
		}
		if want++; comm.calls != want {
			return fmt.Errorf("%v: op #%d, want #%d", c, comm.calls, want)
		}
	}
	for _, sub := range []*Comm{comm.topo.intra, comm.topo.inter} {
		if sub != nil && (sub.calls != 0 || sub.waited != 0) {
			return fmt.Errorf("a level made %d calls and waited %v of its own", sub.calls, sub.waited)
		}
	}
	return nil
}

// hierCalls returns the calls hier is tested with on n ranks: allreduce
// and reducescatter with every type of dts and reduction of redops, and
// allgather with every type, each in and out of place, with every count
// of counts.
func hierCalls(n int, counts []int, dts []dtype.DType, redops []dtype.ReduceOp) []call {
	var out []call
	for _, count := range counts {
		for _, inPlace := range []bool{false, true} {
			mk := func(op Op, dt dtype.DType, redop dtype.ReduceOp) call {
				return call{op: op, algo: hierName, ranks: n, count: count, dt: dt, redop: redop, inPlace: inPlace}
			}
			for _, dt := range dts {
				for _, redop := range redops {
					out = append(out, mk(AllReduce, dt, redop), mk(ReduceScatter, dt, redop))
				}
				out = append(out, mk(AllGather, dt, dtype.Sum))
			}
		}
	}
	return out
}

// hierShapes are the worlds hier is tested on: ranks and ranks per server,
// one level only among them.
var hierShapes = []struct{ ranks, perServer int }{
	{4, 2}, {6, 2}, {6, 3}, {8, 2}, {8, 4}, {9, 3}, {8, 8}, {8, 1}, {5, 5},
}

// TestHier runs hier's three collectives on every shape over shm.
func TestHier(t *testing.T) {
	for _, sh := range hierShapes {
		t.Run(fmt.Sprintf("%d/%d", sh.ranks, sh.perServer), func(t *testing.T) {
			t.Parallel()
			calls := hierCalls(sh.ranks, []int{0, 1, sh.ranks - 1, 37},
				[]dtype.DType{dtype.FP32, dtype.Int32, dtype.FP16}, []dtype.ReduceOp{dtype.Sum, dtype.Max, dtype.Avg})
			hierWorld{ranks: sh.ranks, perServer: sh.perServer}.run(t, calls)
		})
	}
}

// TestHierOverTCP runs hier over sockets, with barriers and flat calls in
// between, where the reader checks every message's call number: the
// levels' messages must carry the parent's.
func TestHierOverTCP(t *testing.T) {
	for _, sh := range []struct{ ranks, perServer int }{{4, 2}, {6, 3}} {
		t.Run(fmt.Sprintf("%d/%d", sh.ranks, sh.perServer), func(t *testing.T) {
			t.Parallel()
			calls := hierCalls(sh.ranks, []int{3, 1001}, []dtype.DType{dtype.FP16}, []dtype.ReduceOp{dtype.Avg})
			calls = append(calls, call{op: AllReduce, algo: "ring", ranks: sh.ranks, count: 99, dt: dtype.FP32, redop: dtype.Sum},
				call{op: AllGather, algo: hierName, ranks: sh.ranks, count: 5, dt: dtype.FP32})
			if sh.ranks == 4 { // messages of 384 KiB, beyond a socket's default buffer
				calls = append(calls, call{op: AllReduce, algo: hierName, ranks: 4, count: 3<<16 + 1, dt: dtype.FP32, redop: dtype.Sum})
			}
			hierWorld{backend: "tcp", ranks: sh.ranks, perServer: sh.perServer, barriers: true}.run(t, calls)
			hierWorld{backend: "proc", ranks: sh.ranks, perServer: sh.perServer, barriers: true}.run(t, calls)
		})
	}
}

// twoLevel is a model of servers of 4 ranks whose links between servers
// are 10 times slower than those inside.
var twoLevel = Model{Alpha: 5e-6, Beta: 1 / 10e9, Gamma: 1 / 5e9, PerServer: 4, InterAlpha: 50e-6, InterBeta: 1 / 1e9}

// TestHierChosenByAuto runs auto on a Comm with a topology and a
// two-level model: hier must run, and be right.
func TestHierChosenByAuto(t *testing.T) {
	const count = 1<<15 + 1 // an odd count, in hier's regime for every op at half of it too
	// Large blocks: for small ones a doubling algorithm whose first steps
	// stay inside a server is cheaper, and auto knows it (TestLevelCosts).
	for _, op := range []Op{AllReduce, ReduceScatter, AllGather} {
		if got, err := Choose(op, Auto, 4*count, 8, twoLevel); err != nil || got != hierName {
			t.Fatalf("%v: auto chose %q (%v), want hier", op, got, err)
		}
	}
	m := twoLevel
	m.PerServer = 0 // the topology sets it
	hierWorld{ranks: 8, perServer: 4, model: &m}.run(t, []call{
		{op: AllReduce, algo: Auto, ranks: 8, count: count, dt: dtype.FP32, redop: dtype.Sum},
		{op: ReduceScatter, algo: Auto, ranks: 8, count: count, dt: dtype.FP32, redop: dtype.Avg, inPlace: true},
		{op: AllGather, algo: Auto, ranks: 8, count: count, dt: dtype.FP32},
	})
}

// TestHierBitwiseAgreement sums inexact floats with hier on topologies
// and requires every rank to end with the same bits.
func TestHierBitwiseAgreement(t *testing.T) {
	const count = 301
	for _, sh := range []struct{ ranks, perServer int }{{6, 2}, {8, 4}, {9, 3}} {
		n := sh.ranks
		rng := rand.New(rand.NewPCG(uint64(n), count))
		sends, recvs := make([][]byte, n), make([][]byte, n)
		for r := range n {
			sends[r], recvs[r] = make([]byte, 8*count), make([]byte, 8*count)
			for i := range count {
				dtype.Encode(dtype.FP64, sends[r], i, math.Ldexp(rng.Float64(), rng.IntN(60)-30))
			}
		}
		runRanks(t, n, func(ctx context.Context, c *Comm) error {
			if err := c.SetTopology(sh.perServer); err != nil {
				return err
			}
			_, err := c.Run(ctx, hierName, &Args{Op: AllReduce, DType: dtype.FP64, RedOp: dtype.Sum,
				Count: count, Send: sends[c.Rank()], Recv: recvs[c.Rank()]})
			return err
		})
		for r := range n {
			if !bytes.Equal(recvs[r], recvs[0]) {
				t.Errorf("n=%d perServer=%d: rank %d's result differs from rank 0's", n, sh.perServer, r)
			}
		}
	}
}

// TestSetTopology checks the layouts SetTopology takes and refuses, what
// Topology returns, and the model's PerServer that follows it.
func TestSetTopology(t *testing.T) {
	tests := []struct {
		ranks, perServer       int
		ok                     bool
		servers, wantPerServer int // Topology's answer
		modelPerServer         int
	}{
		{8, 4, true, 2, 4, 4},
		{8, 1, true, 8, 1, 1},
		{8, 0, true, 1, 8, 0},
		{8, 8, true, 1, 8, 0},
		{1, 1, true, 1, 1, 0},
		{8, 3, false, 0, 0, 0},
		{8, 16, false, 0, 0, 0},
		{8, -1, false, 0, 0, 0},
	}
	for _, tt := range tests {
		c := NewComm(shm.NewWorld(tt.ranks).Endpoint(0))
		err := c.SetTopology(tt.perServer)
		if (err == nil) != tt.ok {
			t.Errorf("%d ranks, %d per server: error %v", tt.ranks, tt.perServer, err)
			continue
		}
		if !tt.ok {
			if s, p := c.Topology(); s != 1 || p != tt.ranks || c.Model().PerServer != 0 {
				t.Errorf("%d ranks, %d per server refused, but the topology is now %d×%d", tt.ranks, tt.perServer, s, p)
			}
			continue
		}
		if s, p := c.Topology(); s != tt.servers || p != tt.wantPerServer {
			t.Errorf("%d ranks, %d per server: Topology() = %d, %d, want %d, %d", tt.ranks, tt.perServer, s, p, tt.servers, tt.wantPerServer)
		}
		m := twoLevel
		m.PerServer = 3
		c.SetModel(m)
		if got := c.Model().PerServer; got != tt.modelPerServer {
			t.Errorf("%d ranks, %d per server: the model says %d per server, want %d", tt.ranks, tt.perServer, got, tt.modelPerServer)
		}
	}
}

// TestHierCost checks that auto picks hier where the model says it is
// cheaper, never without two levels, and that a one-level model costs the
// other algorithms as before.
func TestHierCost(t *testing.T) {
	ops := []Op{AllReduce, ReduceScatter, AllGather}
	for _, op := range ops {
		// Both two-level algorithms beat the ones blind to the levels;
		// between them, multiring runs the levels at once (TestMultiringCost).
		if got, _ := Choose(op, Auto, 64<<20, 8, twoLevel); got != hierName && got != multiringName {
			t.Errorf("%v 64 MiB on 2 servers of 4, inter links 10× slower: auto chose %s, want hier or multiring", op, got)
		}
		hier := Predict(op, hierName, 8, 64<<20, twoLevel)
		for _, a := range algorithms[op] {
			if c := Predict(op, a.name, 8, 64<<20, twoLevel); a.flat != nil && !(hier < c) {
				t.Errorf("%v 64 MiB on 2 servers of 4: hier %v s, not below %s's %v", op, hier, a.name, c)
			}
		}
		for _, name := range levelAlgos[op] {
			if _, ok := lookup(op, name); !ok {
				t.Errorf("%v: level algorithm %s is not registered", op, name)
			}
		}
	}
	for _, m := range []Model{DefaultModel, twoLevel.intraLevel(), {Alpha: 1e-3, Beta: 1e-12, Gamma: 1e-12}} {
		for _, perServer := range []int{0, 1, 3, 16, 64} {
			m.PerServer = perServer
			for _, n := range []int{2, 3, 4, 8, 16} {
				if perServer > 0 && perServer < n && n%perServer == 0 && perServer > 1 {
					continue // two levels
				}
				for _, op := range ops {
					hier, _ := lookup(op, hierName)
					if c := hier.predict(n, kib, m); !math.IsInf(c, 1) {
						t.Errorf("%v n=%d perServer=%d: hier costs %v without two levels", op, n, perServer, c)
					}
					if c := Predict(op, hierName, n, kib, m); !math.IsNaN(c) {
						t.Errorf("%v n=%d perServer=%d: hier predicted at %v without two levels, want NaN", op, n, perServer, c)
					}
					for _, b := range []int{0, kib, 64 * mib} {
						if got, _ := Choose(op, Auto, b, n, m); got == hierName {
							t.Errorf("%v n=%d perServer=%d b=%d: auto chose hier without two levels", op, n, perServer, b)
						}
					}
				}
			}
		}
	}
	// A fused receive-and-reduce makes hier's reductions cheaper too.
	fused := twoLevel
	fused.Fused = true
	for _, op := range []Op{AllReduce, ReduceScatter} {
		if Predict(op, hierName, 8, mib, fused) >= Predict(op, hierName, 8, mib, twoLevel) {
			t.Errorf("%v: hier's fused prediction not below the separate one", op)
		}
	}
	// One level: every cost is its formula on the model as given.
	for _, op := range AllOps() {
		for _, a := range algorithms[op] {
			if a.flat == nil {
				continue // hier, multiring: two levels only
			}
			one, two := Predict(op, a.name, 8, mib, twoLevel.intraLevel()), Predict(op, a.name, 8, mib, twoLevel)
			if want := a.flat(8, mib, twoLevel.intraLevel()); one != want {
				t.Errorf("%v %s: %v with one level, want %v", op, a.name, one, want)
			}
			if !(two > one) {
				t.Errorf("%v %s: %v on two levels with slower links between servers, not above %v", op, a.name, two, one)
			}
		}
	}
}
