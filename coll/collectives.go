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
	AllToAllV
	AllGatherV
	ReduceScatterV
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
//
// The variable-size three (Counts: c(s, d) elements from s to d, and
// p(r), rank r's column sum) size their buffers from the counts; c is then
// the row's nominal block, which a size is rounded to:
//
//	               send           recv          in place      rank r's output
//	alltoallv      row r          column r      none          from s: rank s's c(s, r) at its offset
//	allgatherv     p(r)           sum of p      send in recv  block j: rank j's p(j) from 0
//	reducescatterv sum of p       p(r)          recv in send  reduced block r, p(r) long
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
	AllToAllV: {
		Name:      "alltoallv",
		Bench:     "AllToAllV",
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return n, n },
		InPlace:   NoInPlace,
		Peers:     func(n int) int { return n },
		VLengths:  func(rank int, c *Counts) (int, int) { return c.Sent(rank), c.Received(rank) },
		VExpect: func(rank int, c *Counts) []VExpected {
			out := make([]VExpected, c.Ranks())
			for s := range out {
				// Rank s's block to us starts after its blocks to ranks
				// 0..rank-1.
				from := 0
				for d := range rank {
					from += c.At(s, d)
				}
				out[s] = VExpected{Template: s, From: from, Len: c.At(s, rank)}
			}
			return out
		},
	},
	AllGatherV: {
		Name:      "allgatherv",
		Bench:     "AllGatherV",
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return 1, n },
		InPlace:   SendInRecv,
		VLengths:  func(rank int, c *Counts) (int, int) { return c.PerRank(rank), c.Total() },
		VExpect: func(rank int, c *Counts) []VExpected {
			out := make([]VExpected, c.Ranks())
			for j := range out {
				out[j] = VExpected{Template: j, Len: c.PerRank(j)}
			}
			return out
		},
	},
	ReduceScatterV: {
		Name:      "reducescatterv",
		Bench:     "ReduceScatterV",
		Reduces:   true,
		BusFactor: perRankFactor,
		Lengths:   func(rank, root, n int) (int, int) { return n, 1 },
		InPlace:   RecvInSend,
		VLengths:  func(rank int, c *Counts) (int, int) { return c.Total(), c.PerRank(rank) },
		VExpect: func(rank int, c *Counts) []VExpected {
			from := 0
			for r := range rank {
				from += c.PerRank(r)
			}
			return []VExpected{{Template: Reduced, From: from, Len: c.PerRank(rank)}}
		},
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
