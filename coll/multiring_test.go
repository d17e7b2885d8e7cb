package coll

import (
	"fmt"
	"math"
	"testing"

	"github.com/hccl-test/hccl-test/dtype"
)

// TestMultiringLayout checks the channels' rings: each is a permutation of
// the ranks that visits a server's ranks together, pos inverts at, and
// with several servers every rank sends to another server in exactly one
// channel and receives from another server in exactly one, so that the
// links between servers of all of a server's ranks carry the data.
func TestMultiringLayout(t *testing.T) {
	for _, sh := range []struct{ n, p int }{{4, 2}, {6, 3}, {8, 4}, {16, 8}, {80, 8}, {10, 1}, {8, 8}} {
		g := rings{n: sh.n, p: sh.p, k: sh.p}
		if sh.p == sh.n {
			g.k = 1
		}
		crossOut, crossIn := make([]int, sh.n), make([]int, sh.n)
		for ch := range g.k {
			seen := map[int]bool{}
			for i := range sh.n {
				r := g.at(ch, i)
				if r < 0 || r >= sh.n || seen[r] || r/sh.p != i/sh.p {
					t.Fatalf("%d/%d channel %d: position %d holds rank %d (seen %v)", sh.n, sh.p, ch, i, r, seen[r])
				}
				seen[r] = true
				if g.pos(ch, r) != i {
					t.Fatalf("%d/%d channel %d: pos(%d) = %d, want %d", sh.n, sh.p, ch, r, g.pos(ch, r), i)
				}
				if next := g.at(ch, i+1); next/sh.p != r/sh.p {
					crossOut[r]++
					crossIn[next]++
				}
			}
		}
		if sh.n/sh.p < 2 || sh.p == 1 {
			continue
		}
		for r := range sh.n {
			if crossOut[r] != 1 || crossIn[r] != 1 {
				t.Errorf("%d/%d: rank %d sends across in %d channels and receives across in %d, want 1 and 1", sh.n, sh.p, r, crossOut[r], crossIn[r])
			}
		}
	}
}

// multiringCalls are hierCalls with multiring asked for.
func multiringCalls(n int, counts []int, dts []dtype.DType, redops []dtype.ReduceOp) []call {
	calls := hierCalls(n, counts, dts, redops)
	for i := range calls {
		calls[i].algo = multiringName
	}
	return calls
}

// TestMultiring runs multiring's three collectives on every shape of hier's
// over shm (counts below the channels' and the ranks' numbers too), and
// over tcp, whose reader checks every message's call number, on one shape
// where neighbours share several channels.
func TestMultiring(t *testing.T) {
	for _, sh := range hierShapes {
		t.Run(fmt.Sprintf("%d/%d", sh.ranks, sh.perServer), func(t *testing.T) {
			t.Parallel()
			calls := multiringCalls(sh.ranks, []int{0, 1, sh.ranks - 1, 37},
				[]dtype.DType{dtype.FP32, dtype.Int32, dtype.FP16}, []dtype.ReduceOp{dtype.Sum, dtype.Max, dtype.Avg})
			hierWorld{ranks: sh.ranks, perServer: sh.perServer}.run(t, calls)
		})
	}
	t.Run("tcp 6/3", func(t *testing.T) {
		calls := multiringCalls(6, []int{5, 1001}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum})
		hierWorld{backend: "tcp", ranks: 6, perServer: 3, barriers: true}.run(t, calls)
	})
}

// TestMultiringCost checks multiring's cost: none without two levels; on
// two, below the single ring's (whose links between servers are one
// rank's of each server); and auto's pick between it and hier, which
// runs its levels one after another: multiring where the link between
// servers is a few times slower than one inside (H100 servers with a NIC
// a GPU: 45 against 340 GB/s), hier where it is ten times slower and
// there are only two servers to spread over.
func TestMultiringCost(t *testing.T) {
	cluster := Model{Alpha: 5e-6, Beta: 1 / 340e9, Gamma: 1 / 500e9, PerServer: 8, InterAlpha: 10e-6, InterBeta: 1 / 45e9}
	for _, op := range []Op{AllReduce, ReduceScatter, AllGather} {
		for _, m := range []Model{DefaultModel, twoLevel.intraLevel(), {Alpha: 1e-6, Beta: 1e-9, Gamma: 1e-9, PerServer: 8}} {
			if c := Predict(op, multiringName, 8, mib, m); !math.IsNaN(c) {
				t.Errorf("%v on one level (perServer %d): multiring predicted at %v, want NaN", op, m.PerServer, c)
			}
		}
		b := 64 * mib
		if op == AllReduce {
			b *= 80
		}
		for _, sh := range []struct{ n, p int }{{16, 8}, {80, 8}, {40, 4}} {
			m := cluster
			m.PerServer = sh.p
			multi, ring := Predict(op, multiringName, sh.n, b, m), Predict(op, "ring", sh.n, b, m)
			if !(multi < ring) {
				t.Errorf("%v %d/%d: multiring %v s, not below ring's %v", op, sh.n, sh.p, multi, ring)
			}
			if got, _ := Choose(op, Auto, b, sh.n, m); got != multiringName {
				t.Errorf("%v %d/%d, link between servers 3.3x slower: auto chose %s, want multiring", op, sh.n, sh.p, got)
			}
		}
		// 2 servers of 4, links between them 10x slower: the simulator
		// (--sim-alpha intra=5us,inter=50us --link-bw intra=10GB/s,inter=1GB/s
		// --sim-reduce 5GB/s) takes 38.7 ms for hier's 64 MiB allreduce and
		// 33.1 for multiring's: both levels' links at once win.
		if got, _ := Choose(op, Auto, 64<<20, 8, twoLevel); got != multiringName {
			t.Errorf("%v 64 MiB on 2 servers of 4, inter links 10x slower: auto chose %s, want multiring", op, got)
		}
	}
	// A step takes the slower port: on 10 servers of 8 with a link between
	// servers a third of one inside, the network's, 1/8 of the data a rank
	// at 45 GB/s; allgather's busbw is then about 8 x 45 GB/s.
	m := cluster
	b := 64 * mib
	tm := Predict(AllGather, multiringName, 80, b, m)
	busbw := float64(b) * 79 / tm / 1e9
	if busbw < 300 || busbw > 365 {
		t.Errorf("allgather 80/8: busbw %.0f GB/s, want about 8 x 45", busbw)
	}
}
