package coll

import "math"

// Costs of the chain (chain.go), on one level and on two.
//
// On two levels the chain is costed for a root at the start of a server:
// rank 0, the default root, or any multiple of PerServer. A CostFunc is
// not told the root, and from such a root the relative ranks that the
// chain is built over sit on servers as the world ranks do, so the hops
// that cross servers are known: one into each later server. From a root
// elsewhere in its server more hops cross than these costs charge. A
// rank's own copies count where they lie on the way of the rank that
// finishes last, as the simulated backend charges them and the one-level
// formulas leave them out: the root's copy of its buffer into its receive
// buffer (broadcast) and of its own block (gather and scatter). Calls are
// taken to be out of place, the default; in place some of these copies
// are not made.

// chainSegmentsFor is how many segments a b-byte buffer is cut into.
func chainSegmentsFor(b float64) float64 {
	return max(1, min(chainSegments, math.Floor(b/chainMinSegment)))
}

// chainBroadcastCost: K segments cross n-1 hops in n+K-2 segment times.
func chainBroadcastCost(n int, b float64, m Model) float64 {
	k := chainSegmentsFor(b)
	return (float64(n-2) + k) * (m.Alpha + b/k*m.Beta)
}

// chainReduceCost: as broadcast, every hop also reducing its segment.
func chainReduceCost(n int, b float64, m Model) float64 {
	k := chainSegmentsFor(b)
	return (float64(n-2) + k) * (m.Alpha + m.moveReduce(b/k))
}

// chainGatherCost: the root's neighbour hands on n-1 blocks one after
// another; scatter is the same in reverse.
func chainGatherCost(n int, b float64, m Model) float64 {
	return float64(n-1) * (m.Alpha + b*m.Beta)
}

// chainLevelHops returns how many of the n-1 hops of a chain from a root
// at the start of a server cross servers (one into each later server)
// and how many stay inside one.
func chainLevelHops(n int, m Model) (cross, inside float64) {
	s, _, _ := m.split(n)
	return float64(s - 1), float64(n - s)
}

// chainBroadcastLevelCost: K segments down the chain. The last segment
// reaches the end after the first has made every hop, each on its own
// link, and the K-1 others have followed it through the slowest link,
// which sends them back to back (a rank forwards a segment while the next
// arrives, so elsewhere they wait for it). The root sends every segment
// on its link inside the server, then copies its buffer into its receive
// buffer, which may end later.
func chainBroadcastLevelCost(n int, b float64, m Model) float64 {
	k := chainSegmentsFor(b)
	seg := b / k
	intra, inter := m.intraLevel(), m.crossing(1)
	cross, inside := chainLevelHops(n, m)
	path := cross*(inter.Alpha+seg*inter.Beta) + inside*(intra.Alpha+seg*intra.Beta) +
		(k-1)*seg*max(intra.Beta, inter.Beta)
	return max(path, b*intra.Beta+m.copy(b))
}

// chainReduceLevelCost: the broadcast's pipeline up the chain, each hop
// also reducing its segment into the receiver's partial. The K-1 segments
// behind the first pass the busiest rank, which sends one across servers
// while reducing the next, one every max(segment transfer, reduction).
func chainReduceLevelCost(n int, b float64, m Model) float64 {
	k := chainSegmentsFor(b)
	seg := b / k
	intra, inter := m.intraLevel(), m.crossing(1)
	cross, inside := chainLevelHops(n, m)
	path := cross*(inter.Alpha+inter.moveReduce(seg)) + inside*(intra.Alpha+intra.moveReduce(seg))
	return path + (k-1)*seg*max(intra.Beta, inter.Beta, m.Gamma)
}

// chainBlocksLevels is the time of the n-1 blocks of a chain gather on two
// levels, from the first block's start to the root's last: every rank
// passes on one block per step, its own and then those from farther out.
// Either every block hops all the way without waiting, and the last,
// from the far end, pays every hop's latency and transfer; or the blocks
// from beyond the j-th server boundary queue at the rank that sends them
// across it, which passes them on back to back, and the last of them then
// hops the j*P hops to the root. The time is linear in j, so the first
// and the last boundary stand for all. Scatter is the same run backwards.
func chainBlocksLevels(n int, b float64, m Model) float64 {
	s, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.crossing(1)
	hopIn, hopOut := intra.Alpha+b*intra.Beta, inter.Alpha+b*inter.Beta
	t := float64(s-1)*hopOut + float64(n-s)*hopIn
	for _, j := range []int{1, s - 1} {
		queued := float64(n-1-j*p) * b * max(intra.Beta, inter.Beta)
		t = max(t, float64(j)*(hopOut+float64(p-1)*hopIn)+queued)
	}
	return t
}

// chainGatherLevelCost: chainBlocksLevels; the root's copy of its own
// block into place goes on while the first block comes.
func chainGatherLevelCost(n int, b float64, m Model) float64 {
	return max(chainBlocksLevels(n, b, m), m.copy(b))
}

// chainScatterLevelCost: the root copies its own block into place before
// it sends the first, then chainBlocksLevels.
func chainScatterLevelCost(n int, b float64, m Model) float64 {
	return m.copy(b) + chainBlocksLevels(n, b, m)
}
