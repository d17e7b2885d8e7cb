package coll

// The collectives, in the order `--op all` sweeps them. Adding one means a
// constant here, its Descriptor in the table below and its algorithms
// (each registered with register).
const (
	AllReduce Op = iota + 1
	AllGather
	ReduceScatter
	Broadcast
	Reduce
	AllToAll
	SendRecv
	Gather
	Scatter
)

// descriptors describes every collective, indexed by Op; entry 0 is the
// invalid Op. The nine are in one table rather than a file each, so that a
// reader compares them side by side: they differ in a line or two each.
// Let c be Args.Count elements (one block) and n the number of ranks:
//
//	            send          recv           in place      rank r's output
//	allreduce      c             c           same          reduced block 0
//	allgather      c           n*c           send in recv  block j: rank j's block 0
//	reducescatter n*c            c           recv in send  reduced block r
//	broadcast      c (root)      c           same          root's block 0
//	reduce         c             c (root)    same          reduced block 0 (root)
//	alltoall      n*c          n*c           same          block j: rank j's block r
//	sendrecv       c             c           same          rank r-1's block 0
//	gather         c           n*c (root)    send in recv  block j: rank j's block 0 (root)
//	scatter       n*c (root)     c           recv in send  root's block r
var descriptors = [...]Descriptor{
	AllReduce: {
		Name:      "allreduce",
		Bench:     "AllReduce",
		Reduces:   true,
		BusFactor: func(n int) float64 { return 2 * float64(n-1) / float64(n) },
		Lengths:   func(rank, root, n int) (int, int) { return 1, 1 },
		InPlace:   SameStart,
		Expect:    func(rank, root, n int) []Expected { return []Expected{{Reduced, 0}} },
	},
	AllGather: {
		Name:      "allgather",
		Bench:     "AllGather",
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return 1, n },
		InPlace:   SendInRecv,
		Expect: func(rank, root, n int) []Expected {
			return eachRank(n, func(j int) Expected { return Expected{j, 0} })
		},
	},
	ReduceScatter: {
		Name:      "reducescatter",
		Bench:     "ReduceScatter",
		Reduces:   true,
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return n, 1 },
		InPlace:   RecvInSend,
		Expect:    func(rank, root, n int) []Expected { return []Expected{{Reduced, rank}} },
	},
	Broadcast: {
		Name:      "broadcast",
		Bench:     "Broadcast",
		Rooted:    true,
		BusFactor: oneFactor,
		Lengths:   func(rank, root, n int) (int, int) { return onRoot(rank, root, 1), 1 },
		InPlace:   SameStart,
		Expect:    func(rank, root, n int) []Expected { return []Expected{{root, 0}} },
	},
	Reduce: {
		Name:      "reduce",
		Bench:     "Reduce",
		Reduces:   true,
		Rooted:    true,
		BusFactor: oneFactor,
		Lengths:   func(rank, root, n int) (int, int) { return 1, onRoot(rank, root, 1) },
		InPlace:   SameStart,
		Expect: func(rank, root, n int) []Expected {
			if rank != root {
				return nil
			}
			return []Expected{{Reduced, 0}}
		},
	},
	AllToAll: {
		Name:      "alltoall",
		Bench:     "AllToAll",
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return n, n },
		InPlace:   SameStart,
		// Every rank sends to every other rank.
		Peers: func(n int) int { return n },
		Expect: func(rank, root, n int) []Expected {
			return eachRank(n, func(j int) Expected { return Expected{j, rank} })
		},
	},
	SendRecv: {
		Name:      "sendrecv",
		Bench:     "SendRecv",
		BusFactor: oneFactor,
		Lengths:   func(rank, root, n int) (int, int) { return 1, 1 },
		InPlace:   SameStart,
		Expect:    func(rank, root, n int) []Expected { return []Expected{{(rank - 1 + n) % n, 0}} },
	},
	Gather: {
		Name:      "gather",
		Bench:     "Gather",
		Rooted:    true,
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return 1, onRoot(rank, root, n) },
		InPlace:   SendInRecv,
		Expect: func(rank, root, n int) []Expected {
			if rank != root {
				return nil
			}
			return eachRank(n, func(j int) Expected { return Expected{j, 0} })
		},
	},
	Scatter: {
		Name:      "scatter",
		Bench:     "Scatter",
		Rooted:    true,
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return onRoot(rank, root, n), 1 },
		InPlace:   RecvInSend,
		Expect:    func(rank, root, n int) []Expected { return []Expected{{root, rank}} },
	},
}

// perRankFactor is the bus factor (n-1)/n of a collective in which each
// rank's block crosses a link once to each other rank.
func perRankFactor(n int) float64 { return float64(n-1) / float64(n) }

// oneFactor is the bus factor 1 of a collective whose one block crosses
// each link once.
func oneFactor(int) float64 { return 1 }

// onRoot returns blocks on the root and 0 on every other rank.
func onRoot(rank, root, blocks int) int {
	if rank != root {
		return 0
	}
	return blocks
}

// eachRank returns one expectation per rank j, in rank order.
func eachRank(n int, f func(j int) Expected) []Expected {
	out := make([]Expected, n)
	for j := range out {
		out[j] = f(j)
	}
	return out
}
