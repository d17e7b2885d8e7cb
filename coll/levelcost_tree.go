package coll

// Two-level costs of the rooted algorithms: the binomial tree (tree.go)
// and the chain registered as "ring" for broadcast, reduce, gather and
// scatter (chain.go).
//
// Both are costed for a root at the start of a server: rank 0, the
// default root, or any multiple of PerServer. A CostFunc is not told the
// root, and from such a root the relative ranks that the tree and the
// chain are built over sit on servers as the world ranks do, so the edges
// that cross servers are known: a binomial tree's edges at distances of at
// least PerServer (with PerServer a power of two, every subtree below
// that distance lies inside one server), and one hop of the chain into
// each later server. From a root elsewhere in its server more edges cross
// than these costs charge. The tree's costs also need n to be a power of
// two: then the deepest path takes a hop at every distance; otherwise
// some children are missing and the sums below overstate it by a latency
// or more.
//
// A rank's own copies count where they lie on the way of the rank that
// finishes last, as the simulated backend charges them and the one-level
// formulas leave them out: the root's copy of its buffer into its receive
// buffer (broadcast), the root's rotation of all n blocks (tree gather and
// scatter), an inner rank's copy of its own block into its run of blocks
// (tree gather and scatter), the root's copy of its own block (chain
// gather and scatter). Calls are taken to be out of place, the default;
// in place some of these copies are not made.
//
// The double binary tree's cost, on one level or two, is in
// dbtree_cost.go: its pipeline runs at the pace of the heaviest cycle of
// dependencies through both trees, which depends on how the trees fall on
// the servers, so it follows every rank's clock instead.

// treeTop returns the distance of a binomial tree's widest round over n
// ranks: the root's first child in a broadcast, its last in a reduction.
func treeTop(n int) int { return treeReach(0, n) / 2 }

// treeBroadcastLevelCost: the buffer reaches the last leaf after one hop
// at every distance, each on its own link (the rounds at distances of at
// least PerServer cross servers), and each parent sends to its children
// one after another, widest first; so the last leaf, down the path that
// takes every hop, has it after every round's latency and transfer. The
// root sends in every round, then copies its buffer into its receive
// buffer, which may end later. With shared cores, a round's bytes cost
// as in treeRounds.
func treeBroadcastLevelCost(n int, b float64, m Model) float64 {
	var path, root float64
	for h := 1; h < n; h *= 2 {
		l := m.level(treeTop(n) / h)
		move := b * l.Beta * m.share(min(h, n-h), n)
		path += l.Alpha + move
		root += move
	}
	return max(path, root+m.copy(b))
}

// treeReduceLevelCost: the broadcast's rounds in reverse, nearest first,
// each received and reduced on its own link; a rank takes its children's
// partials in the order they are ready, so the root's last partial, from
// its widest subtree, comes after every round's latency, transfer and
// reduction. The root reduces into its receive buffer: nothing is copied.
func treeReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for h := 1; h < n; h *= 2 {
		l := m.level(treeTop(n) / h)
		t += l.Alpha + l.moveReduce(b)*m.share(min(h, n-h), n)
	}
	return t
}

// treeRunRound is the round at distance d of a binomial tree gather or
// scatter of blocks of b bytes on two levels: about n/2d subtrees move
// their min(d, n-d) blocks over the link at distance d, with shared cores
// as in treeGatherCost. It returns that link's latency and the transfer.
func treeRunRound(n, d int, b float64, m Model) (alpha, move float64) {
	k := (n - d + 2*d - 1) / (2 * d)
	l := m.level(d)
	return l.Alpha, float64(min(d, n-d)) * b * l.Beta * m.share(k, n)
}

// treeGatherLevelCost: the root takes its subtrees' runs nearest first,
// each after its own link's latency and transfer (the rounds at distances
// of at least PerServer cross servers), the last from its widest subtree,
// which took its own the same way; then it rotates the n blocks into rank
// order. An inner rank first copies its own block into its run, which
// its nearest child's block may take longer to arrive than.
func treeGatherLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		alpha, move := treeRunRound(n, d, b, m)
		if d == 1 {
			t += max(alpha+move, m.copy(b))
			continue
		}
		t += alpha + move
	}
	return t + m.copy(float64(n)*b)
}

// treeScatterLevelCost: the root rotates its n blocks into relative-rank
// order, then each rank sends its children their parts, widest first, one
// after another; the last rank to finish is the last leaf, after every
// round's latency and transfer, or its parent, which after sending that
// leaf its block copies its own out of its run.
func treeScatterLevelCost(n int, b float64, m Model) float64 {
	t := m.copy(float64(n) * b)
	for d := 1; d < n; d *= 2 {
		alpha, move := treeRunRound(n, d, b, m)
		if d == 1 {
			t += move + max(alpha, m.copy(b))
			continue
		}
		t += alpha + move
	}
	return t
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
	intra, inter := m.intraLevel(), m.interLevel()
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
	intra, inter := m.intraLevel(), m.interLevel()
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
	intra, inter := m.intraLevel(), m.interLevel()
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
