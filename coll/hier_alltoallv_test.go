package coll

import (
	"fmt"
	"math"
	"testing"

	"github.com/hccl-test/hccl-test/dtype"
)

// hierAllToAllVCalls are the alltoallv calls hier is tested with on n
// ranks: every count of counts, with and without a hot receiver (the
// last rank), in each type of dts.
func hierAllToAllVCalls(n int, counts []int, dts []dtype.DType) []call {
	var out []call
	for _, count := range counts {
		for _, dt := range dts {
			for _, hot := range []int{0, n} {
				out = append(out, call{op: AllToAllV, algo: hierName, ranks: n, count: count, dt: dt, redop: dtype.Sum, hot: hot})
			}
		}
	}
	return out
}

// TestHierAllToAllV runs hier's alltoallv on shm on worlds of 1 to 9
// ranks, two levels and one, with uneven counts, empty pairs (testCounts)
// and a hot receiver, every type, and checks every rank's output.
func TestHierAllToAllV(t *testing.T) {
	shapes := append([]struct{ ranks, perServer int }{{1, 1}, {2, 1}, {3, 3}, {7, 7}, {8, 2}}, hierShapes...)
	for _, sh := range shapes {
		t.Run(fmt.Sprintf("%d/%d", sh.ranks, sh.perServer), func(t *testing.T) {
			t.Parallel()
			calls := hierAllToAllVCalls(sh.ranks, []int{0, 1, sh.ranks - 1, 37}, dtype.All())
			hierWorld{ranks: sh.ranks, perServer: sh.perServer}.run(t, calls)
		})
	}
}

// TestHierAllToAllVOverTCP runs hier's alltoallv over sockets (tcp) and
// proc's shared memory, with barriers and flat calls in between: the
// levels' messages must carry the parent's call.
func TestHierAllToAllVOverTCP(t *testing.T) {
	for _, sh := range []struct{ ranks, perServer int }{{4, 2}, {6, 3}, {8, 4}} {
		t.Run(fmt.Sprintf("%d/%d", sh.ranks, sh.perServer), func(t *testing.T) {
			t.Parallel()
			calls := hierAllToAllVCalls(sh.ranks, []int{0, 3, 1001}, []dtype.DType{dtype.FP16})
			calls = append(calls, call{op: AllToAllV, algo: "direct", ranks: sh.ranks, count: 99, dt: dtype.FP32},
				call{op: AllToAllV, algo: hierName, ranks: sh.ranks, count: 5, dt: dtype.Int8, hot: 2})
			for _, backend := range []string{"tcp", "proc"} {
				hierWorld{backend: backend, ranks: sh.ranks, perServer: sh.perServer, barriers: true}.run(t, calls)
			}
		})
	}
}

// TestHierAllToAllVCost: on 8 servers of 8 ranks with the simulator's
// default links (2 us inside a server, 10 us between, gap 1 us), auto
// picks hier for small blocks, where direct's 62 gaps cost more than
// hier's extra hop and copies, and direct for large ones, where hier's
// copies and second move of the bytes cost more; never hier without two
// levels.
func TestHierAllToAllVCost(t *testing.T) {
	m := Model{Alpha: 2e-6, Beta: 1 / 25e9, Gamma: 1 / 10e9, Copy: 1 / 15e9, Gap: 1e-6,
		PerServer: 8, InterAlpha: 10e-6, InterBeta: 1 / 25e9}
	for _, tc := range []struct {
		b    int
		want string
	}{{64, hierName}, {1 << 10, hierName}, {1 << 20, "direct"}} {
		if got, err := Choose(AllToAllV, Auto, tc.b, 64, m); err != nil || got != tc.want {
			t.Errorf("blocks of %d bytes on 8 x 8: auto chose %q (%v), want %s", tc.b, got, err, tc.want)
		}
	}
	// Small blocks: direct's gaps (62 of them) against hier's (6 + 6).
	if h, d := Predict(AllToAllV, hierName, 64, 64, m), Predict(AllToAllV, "direct", 64, 64, m); !(h < d-40e-6) {
		t.Errorf("64-byte blocks: hier %.3g s, direct %.3g s: want hier cheaper by about 50 gaps", h, d)
	}
	for _, perServer := range []int{0, 1, 64} {
		one := m
		one.PerServer = perServer
		if c := Predict(AllToAllV, hierName, 64, 64, one); !math.IsNaN(c) {
			t.Errorf("%d per server: hier predicted at %v, want NaN", perServer, c)
		}
		if got, _ := Choose(AllToAllV, Auto, 64, 64, one); got == hierName {
			t.Errorf("%d per server: auto chose hier", perServer)
		}
	}
}

// TestHierAllToAllVScratch: VScratch says what hier's alltoallv takes on
// the rank that takes most, by a formula of its own (what the rank's
// server peers send through it, then the larger of its sends to them and
// its runs to other servers), and on a routing whose rail ranks forward
// their server's blocks to two other servers it is more than twice the
// largest row or column, what Comm.Reserve holds; other algorithms take
// none of their own.
func TestHierAllToAllVScratch(t *testing.T) {
	const S, P, B = 3, 4, 1000
	for _, tc := range []struct {
		name     string
		cell     func(s1, l1, s2, l2 int) int
		beyond2x bool
	}{
		{"uniform", func(s1, l1, s2, l2 int) int { return B }, false},
		{"rail forwards to two servers", func(s1, l1, s2, l2 int) int {
			if s1 == 0 && l1 != 0 && s2 != 0 && l2 == 0 {
				return B
			}
			return 0
		}, true},
		{"hot receiver", func(s1, l1, s2, l2 int) int {
			if s2 == 2 && l2 == 3 {
				return 8 * B
			}
			return 1
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := S * P
			cells := make([]int, n*n)
			for src := range n {
				for dst := range n {
					cells[src*n+dst] = tc.cell(src/P, src%P, dst/P, dst%P)
				}
			}
			c, err := NewCounts(n, cells)
			if err != nil {
				t.Fatal(err)
			}
			want, largest := 0, 0
			for r := range n {
				s, l := r/P, r%P
				in, out, run := 0, 0, 0
				for j := range P {
					for s2 := range S {
						if j != l {
							in += tc.cell(s, j, s2, l)
							out += tc.cell(s, l, s2, j)
						}
						if s2 != s {
							run += tc.cell(s, j, s2, l)
						}
					}
				}
				want = max(want, in+max(out, run))
				largest = max(largest, c.Sent(r), c.Received(r))
			}
			if got := VScratch(AllToAllV, []string{Auto}, c, S, P); got != want {
				t.Errorf("VScratch = %d elements, want %d", got, want)
			}
			if got := VScratch(AllToAllV, []string{hierName}, c, S, P); got != want {
				t.Errorf("VScratch of hier alone = %d elements, want %d", got, want)
			}
			if got := VScratch(AllToAllV, []string{"direct", "pairwise"}, c, S, P); got != 0 {
				t.Errorf("VScratch of direct and pairwise = %d, want 0", got)
			}
			if got := VScratch(AllToAllV, []string{Auto}, c, 1, n); got != 0 {
				t.Errorf("VScratch on one server = %d, want 0 (hier is direct there)", got)
			}
			if beyond := want > 2*largest; beyond != tc.beyond2x {
				t.Errorf("scratch %d elements against twice the largest row or column %d: beyond = %v, want %v", want, 2*largest, beyond, tc.beyond2x)
			}
		})
	}
}
