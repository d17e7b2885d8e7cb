package coll

import (
	"context"
	"fmt"
	"math"

	"github.com/hccl-test/hccl-test/dtype"
)

// Hierarchical (two-level) algorithms, as HCCL's level-0/level-1 schemes
// and NCCL's intra- and inter-node rings: on a Comm with a topology
// (SetTopology; topology.go) of S servers of P ranks, rank r = s·P + l,
// each collective runs as steps on the intra-server group (P ranks) and the
// inter-server group (S ranks, one per server), so that only 1/P of the
// data crosses the slow links between servers. Each level runs the
// registered algorithm that the level's model predicts to be cheapest
// among levelAlgos, called directly on the level's sub-Comm, so that its
// messages carry the parent's call (see topology.go).
//
// With one server, or one rank per server, hier is that level's algorithm
// alone. Its cost is +Inf then, so that auto never picks it without a
// second level.

// hierName is the name hier is registered under.
const hierName = "hier"

func init() {
	register(AllReduce, hierName, hierAllReduce, costs{levels: hierAllReduceCost})
	register(ReduceScatter, hierName, hierReduceScatter, costs{levels: hierReduceScatterCost})
	register(AllGather, hierName, hierAllGather, costs{levels: hierAllGatherCost})
}

// levelAlgos lists, by collective, the algorithms hier may run on one
// level, sorted by name (the first wins a tie, as in Choose).
var levelAlgos = map[Op][]string{
	AllReduce:     {"rhd", "ring"},
	ReduceScatter: {"direct", "rhd", "ring"},
	AllGather:     {"bruck", "rd", "ring"},
}

// hierAllReduce, for a vector cut into P near-equal parts (span):
//
//  1. intra-server ring reduce-scatter: local rank l ends with part l
//     reduced over its server, in its receive buffer;
//  2. inter-server allreduce of part l among the S ranks with local rank
//     l (rhd or ring), in place;
//  3. Avg only: part l is divided by n, once, after the whole sum;
//  4. intra-server ring allgather of the parts.
//
// Steps 1 and 4 are the phases of ringAllReduce on the server's ranks,
// which take parts of unequal sizes; the levels reduce with Sum when the
// call is Avg. Partials are written only into the receive buffer, so no
// scratch is used. Every part is reduced on one rank of each server in
// the same order and then by an allreduce that leaves its ranks bitwise
// equal, so all ranks end bitwise equal.
func hierAllReduce(ctx context.Context, c *Comm, a *Args) error {
	intra, inter, done, err := c.twoLevels(ctx, a)
	if done {
		return err
	}
	p, l, es := intra.size, intra.rank, a.DType.Size()
	send, recv := a.Send[:a.Bytes()], a.Recv[:a.Bytes()]
	part := func(buf []byte, i int) []byte {
		lo, hi := span(a.Count, p, mod(i, p))
		return elems(buf, lo, hi, es)
	}
	redop := levelRedOp(a.RedOp)
	// Step 1.
	if err := ringReduceScatterParts(ctx, intra, send, recv, part, dtype.Reducer(a.DType, redop)); err != nil {
		return fmt.Errorf("intra-server reduce-scatter: %w", err)
	}
	// Step 2.
	mine := part(recv, l)
	lo, hi := span(a.Count, p, l)
	sub := &Args{Op: AllReduce, DType: a.DType, RedOp: redop, Count: hi - lo, Send: mine, Recv: mine}
	if err := runLevel(ctx, inter, sub, "inter-server"); err != nil {
		return err
	}
	// Step 3.
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, mine, c.size)
	}
	// Step 4.
	if err := ringAllGatherParts(ctx, intra, recv, part); err != nil {
		return fmt.Errorf("intra-server allgather: %w", err)
	}
	return nil
}

// hierReduceScatter gives rank r = s·P + l block r reduced over all n
// ranks. The blocks of the input are indexed (s', j) for world rank
// s'·P + j; local rank j's share of a server is the S blocks (0, j),
// (1, j), ..., (S-1, j), one per server, which are strided in the input:
//
//  1. regroup the input into scratch as P runs of S blocks, run j holding
//     blocks (s', j) in server order;
//  2. intra-server reduce-scatter of the runs (blocks of S·count): local
//     rank l ends with run l reduced over its server;
//  3. inter-server reduce-scatter of run l among the S ranks with local
//     rank l: inter rank s, which is world rank s·P + l = r, gets block
//     (s, l) = r reduced over every server;
//  4. Avg only: the block is divided by n.
//
// Reducing inside the server first makes only S blocks per rank cross
// between servers, not n. The input is only read (step 1), before the
// receive buffer, which an in-place call aliases with input block r, is
// written (step 3). Scratch: the regrouped input and run l, (n+S) blocks.
func hierReduceScatter(ctx context.Context, c *Comm, a *Args) error {
	intra, inter, done, err := c.twoLevels(ctx, a)
	if done {
		return err
	}
	n, s, p, b := c.size, inter.size, intra.size, a.Bytes()
	scratch := c.scratchBuf((n + s) * b)
	runs, run := scratch[:n*b], scratch[n*b:]
	redop := levelRedOp(a.RedOp)
	// Step 1.
	c.regroup(runs, a.Send[:n*b], s, p, b)
	// Step 2.
	sub := &Args{Op: ReduceScatter, DType: a.DType, RedOp: redop, Count: s * a.Count, Send: runs, Recv: run}
	if err := runLevel(ctx, intra, sub, "intra-server"); err != nil {
		return err
	}
	// Step 3.
	sub = &Args{Op: ReduceScatter, DType: a.DType, RedOp: redop, Count: a.Count, Send: run, Recv: a.Recv[:b]}
	if err := runLevel(ctx, inter, sub, "inter-server"); err != nil {
		return err
	}
	// Step 4.
	if a.RedOp == dtype.Avg {
		c.divideBy(a.DType, a.Recv[:b], n)
	}
	return nil
}

// hierAllGather is the mirror of hierReduceScatter:
//
//  1. inter-server allgather of this rank's block among the S ranks with
//     local rank l, into run l of scratch: blocks (s', l) in server order;
//  2. intra-server allgather of the runs (blocks of S·count), in place in
//     scratch: every rank holds run j for every local rank j;
//  3. regroup scratch into the receive buffer: block (s', j) of run j goes
//     to block s'·P + j, the block of the rank that contributed it.
//
// Gathering between servers first makes only S blocks per rank cross
// between servers, not n. The input is read in step 1 only, before the
// receive buffer, which an in-place call aliases it with, is written.
// Scratch: n blocks.
func hierAllGather(ctx context.Context, c *Comm, a *Args) error {
	intra, inter, done, err := c.twoLevels(ctx, a)
	if done {
		return err
	}
	n, s, p, l, b := c.size, inter.size, intra.size, intra.rank, a.Bytes()
	runs := c.scratchBuf(n * b)
	// Step 1.
	sub := &Args{Op: AllGather, DType: a.DType, Count: a.Count, Send: a.Send[:b], Recv: block(runs, l, s*b)}
	if err := runLevel(ctx, inter, sub, "inter-server"); err != nil {
		return err
	}
	// Step 2.
	sub = &Args{Op: AllGather, DType: a.DType, Count: s * a.Count, Send: block(runs, l, s*b), Recv: runs}
	if err := runLevel(ctx, intra, sub, "intra-server"); err != nil {
		return err
	}
	// Step 3.
	c.regroup(a.Recv[:n*b], runs, p, s, b)
	return nil
}

// runLevel runs a on the level's sub-Comm sub with the algorithm of
// levelAlgos that the level's model predicts to be cheapest. Every member
// of the level passes the same collective and count, so all choose alike.
// It does not announce a call: the messages carry the parent's.
func runLevel(ctx context.Context, sub *Comm, a *Args, level string) error {
	alg := cheapestLevel(a.Op, sub.size, float64(a.Bytes()), sub.model)
	if alg == nil {
		return fmt.Errorf("%s %v: no algorithm serves it", level, a.Op)
	}
	if err := alg.run(ctx, sub, a); err != nil {
		return fmt.Errorf("%s %v (%s): %w", level, a.Op, alg.name, err)
	}
	return nil
}

// cheapestLevel returns the algorithm of levelAlgos[op] that m predicts to
// be fastest on n ranks with blocks of b bytes (the first on one rank), or
// nil if none of them is registered.
func cheapestLevel(op Op, n int, b float64, m Model) *algorithm {
	var best *algorithm
	bestCost := math.Inf(1)
	for _, name := range levelAlgos[op] {
		alg, ok := lookup(op, name)
		if !ok {
			continue
		}
		if best == nil {
			best = alg
		}
		if n <= 1 {
			break
		}
		if c := alg.flat(n, b, m); c < bestCost {
			best, bestCost = alg, c
		}
	}
	return best
}

// levelCost is the cost of cheapestLevel's choice: 0 on one rank, +Inf
// when there is none.
func levelCost(op Op, n int, b float64, m Model) float64 {
	if n <= 1 {
		return 0
	}
	alg := cheapestLevel(op, n, b, m)
	if alg == nil {
		return math.Inf(1)
	}
	return alg.flat(n, b, m)
}

// levelRedOp is the reduction the levels run for a call's op: Sum for
// Avg, which hier divides once at the end, the op itself otherwise.
func levelRedOp(op dtype.ReduceOp) dtype.ReduceOp {
	if op == dtype.Avg {
		return dtype.Sum
	}
	return op
}

// hierAllReduceCost, for S servers of P ranks (Model.PerServer) and a
// vector of b bytes: the intra-server phases of a ring allreduce on P
// ranks with the intra constants, plus the cheaper of rhd and ring
// allreduce on S ranks of b/P bytes with the inter constants. +Inf
// without two levels.
func hierAllReduceCost(n int, b float64, m Model) float64 {
	s, p, ok := m.split(n)
	if !ok {
		return math.Inf(1)
	}
	return ringAllReduceCost(p, b, m.intraLevel()) + levelCost(AllReduce, s, b/float64(p), m.interLevel())
}

// hierReduceScatterCost, for blocks of b bytes: the regrouping copy of n
// blocks (Model.copy), the intra-server reduce-scatter on P ranks of
// blocks of S·b bytes, and the inter-server one on S ranks of blocks of b
// bytes with the inter constants. +Inf without two levels.
func hierReduceScatterCost(n int, b float64, m Model) float64 {
	s, p, ok := m.split(n)
	if !ok {
		return math.Inf(1)
	}
	return m.copy(float64(n)*b) + levelCost(ReduceScatter, p, float64(s)*b, m.intraLevel()) +
		levelCost(ReduceScatter, s, b, m.interLevel())
}

// hierAllGatherCost, for blocks of b bytes: the inter-server allgather on
// S ranks of blocks of b bytes with the inter constants, the intra-server
// one on P ranks of blocks of S·b bytes, and the regrouping copy of n
// blocks. +Inf without two levels.
func hierAllGatherCost(n int, b float64, m Model) float64 {
	s, p, ok := m.split(n)
	if !ok {
		return math.Inf(1)
	}
	return levelCost(AllGather, s, b, m.interLevel()) + levelCost(AllGather, p, float64(s)*b, m.intraLevel()) +
		m.copy(float64(n)*b)
}

// twoLevels returns the Comm's two levels; or, when one of them has a
// single rank, runs a on the other as a whole (done is then true and err
// its outcome), since hier on one level is that level's algorithm.
func (c *Comm) twoLevels(ctx context.Context, a *Args) (intra, inter *Comm, done bool, err error) {
	intra, inter, err = c.levels()
	switch {
	case err != nil:
		return nil, nil, true, err
	case inter.size == 1:
		return nil, nil, true, runLevel(ctx, intra, a, "intra-server")
	case intra.size == 1:
		return nil, nil, true, runLevel(ctx, inter, a, "inter-server")
	}
	return intra, inter, false, nil
}
