package coll

import (
	"math"
	"math/bits"
)

// Model holds the constants of the latency-bandwidth (alpha-beta-gamma)
// cost model that `auto` chooses algorithms with. They are properties of a
// backend on a machine, measured before a sweep (bench calibrates them);
// DefaultModel stands in until then.
type Model struct {
	// Alpha is the cost of one message in seconds: what a step that moves
	// almost nothing takes.
	Alpha float64
	// Beta is the cost of moving one byte over a link, in seconds, while
	// every rank moves data at once.
	Beta float64
	// Gamma is the cost of reducing one byte (reading two operands and
	// writing the result), in seconds, while every rank reduces at once.
	Gamma float64
	// Copy is the cost of copying one byte between a rank's own buffers,
	// in seconds; 0 means two thirds of Gamma (a copy reads one operand
	// and writes one, a reduction reads two).
	Copy float64
	// Fused is set for backends whose receiver reduces straight out of the
	// sender's memory (shm): receiving a byte and reducing it is then one
	// pass over memory, not a move followed by a reduction.
	Fused bool
	// Cores, when set, says that the ranks move data with the CPUs of
	// one machine, this many of them (shm, where a receiver copies out of
	// the sender's buffer itself; tcp with every rank on one host, whose
	// kernel copies every message with the CPU of its sender and of its
	// receiver). Beta and Gamma are measured with every
	// rank busy, so they stand for max(n, Cores)/Cores ranks sharing a
	// core, and a step in which fewer ranks move data goes faster (share).
	// 0: every rank moves its data without slowing the others.
	Cores int
	// PerServer gives the model a second level: the world's ranks sit on
	// servers, PerServer consecutive ranks each, and links between servers
	// cost InterAlpha and InterBeta. 0 means one level: every link is the
	// same. A Comm sets it from its topology (SetTopology). Algorithms
	// that ignore the topology are costed on the slower of the two links
	// (flat); hier costs each level with its own.
	PerServer int
	// InterAlpha and InterBeta are Alpha and Beta for messages between
	// servers; 0 means the same as inside one.
	InterAlpha, InterBeta float64
	// InterShared says that the ranks of a server share one link between
	// servers (one NIC a server, as network namespaces joined by one veth
	// each are): InterBeta is what one rank gets alone, and a step in
	// which k of a server's ranks send to other servers at once gives
	// each 1/k of it. false: every rank has a link of its own (a NIC a
	// GPU, as on rail-optimized clusters).
	InterShared bool
	// Gap is what each further message of a step that posts several at
	// once adds to its latency, in seconds: the handling a rank spends
	// on each (a simulated rank's gap, LogP's g). 0 means half of Alpha,
	// what real transports spend.
	Gap float64
	// SenderMoves is set for transports on which the sending rank's CPU
	// copies every message out (tcp, whose sends copy into the kernel):
	// a step's gaps and its transfers then add up, where elsewhere the
	// rank hands out its next message while the one before moves.
	SenderMoves bool
}

// gap returns what each further message of a step costs (Gap).
func (m Model) gap() float64 {
	if m.Gap > 0 {
		return m.Gap
	}
	return m.Alpha / 2
}

// moveReduce is the cost of receiving b bytes and reducing them into an
// accumulator: a move then a reduction, or one pass when the backend
// fuses them.
func (m Model) moveReduce(b float64) float64 { return m.received(b*m.Beta, b) }

// received is the cost of receiving messages whose transfer takes move
// seconds and reducing b bytes of them: the two in turn, or the slower of
// the two when the backend fuses them.
func (m Model) received(move, b float64) float64 {
	if m.Fused {
		return max(move, b*m.Gamma)
	}
	return move + b*m.Gamma
}

// share is how much of Beta and Gamma a byte costs in a step in which k of
// n ranks move data at once: 1 unless they share Cores CPUs, then
// max(k, Cores)/max(n, Cores).
func (m Model) share(k, n int) float64 {
	if m.Cores <= 0 {
		return 1
	}
	return float64(max(k, m.Cores)) / float64(max(n, m.Cores))
}

// copy is the cost of copying b bytes between a rank's own buffers.
func (m Model) copy(b float64) float64 {
	if m.Copy > 0 {
		return b * m.Copy
	}
	return b * m.Gamma * 2 / 3
}

// DefaultModel is a model of loopback TCP on a small machine (about 20 us
// per message, 1.5 GB/s per link, 1 GB/s reduction); calibration replaces
// it.
var DefaultModel = Model{Alpha: 20e-6, Beta: 1 / 1.5e9, Gamma: 1 / 1e9}

// Valid reports whether every constant is a finite positive number, the
// optional ones (inter-server, Copy) finite and not negative, and
// PerServer not negative.
func (m Model) Valid() bool {
	for _, v := range []float64{m.Alpha, m.Beta, m.Gamma} {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	for _, v := range []float64{m.InterAlpha, m.InterBeta, m.Copy} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return m.PerServer >= 0 && m.Cores >= 0
}

// The formulas on the algorithms count a byte received and reduced as β+γ;
// with Fused set it costs max(β, γ) instead (moveReduce).

// CostFunc predicts, in seconds, the time one call of an algorithm takes on
// n ranks with blocks of b bytes (Args.Bytes(): the whole vector for
// allreduce, broadcast and reduce; one rank's block for the others).
type CostFunc func(n int, b float64, m Model) float64

// log2Ceil returns ceil(log2 n) for n >= 1.
func log2Ceil(n int) float64 { return float64(bits.Len(uint(n - 1))) }

// log2Floor returns floor(log2 n) for n >= 1.
func log2Floor(n int) float64 { return float64(bits.Len(uint(n)) - 1) }

// pow2Below returns the largest power of two p <= n and e = 1 if n is not
// one (the fold step of recursive doubling and halving runs), else 0.
func pow2Below(n int) (p, e float64) {
	p = float64(uint(1) << (bits.Len(uint(n)) - 1))
	if float64(n) != p {
		e = 1
	}
	return p, e
}

// costs is what auto predicts an algorithm's time with: a formula on one
// level and, where the algorithm has one, a cost on two levels that charges
// each message its own link. Each algorithm's file registers its costs
// beside its run (register).
//
// On a two-level model the algorithms blind to the topology would be
// costed on the slower link for every step (Model.flat), which overstates
// most of them; their two-level costs follow their messages instead:
//
//   - ring (ring.go): laid out server by server, one link in P crosses
//     servers; a rank whose next block is ready sends it as soon as its
//     port is free, so the crossing links carry their blocks back to back
//     while the latencies and reductions of the other steps hide behind
//     them;
//   - recursive doubling and halving (rd.go, rhd.go, rd_allgather.go):
//     with ranks numbered server by server and powers of two throughout,
//     the partner of a step at distance d < PerServer is on the same
//     server, so only the steps at larger distances cross;
//   - the direct ones (direct.go, oneshot.go), where every rank sends to
//     every other at once: a rank's messages to its own server leave on
//     the fast link and those to other servers on the slow one, side by
//     side;
//   - the rooted ones, binomial tree and chain (tree.go, chain_cost.go):
//     their edges that cross servers are known from the layout;
//   - the shifted exchanges, pairwise and Bruck's (shift_cost.go):
//     every rank sends to the rank a fixed distance on, so a step crosses
//     servers for some ranks and not others, and the ranks' steps chain up;
//   - the double binary tree (dbtree_cost.go), whose cost follows every
//     rank's clock through the steps on one level or two.
//
// hier (hier.go) knows the two levels and has no cost on one.
type costs struct {
	// flat is the cost on one level. On a two-level model where levels
	// does not apply, it is charged the slower link for every step
	// (Model.flat). nil for an algorithm that only has a cost on two
	// levels (hier): on one it costs +Inf, so that auto never picks it.
	flat CostFunc
	// levels is the cost on a two-level model, given the model as it is;
	// nil for none. It applies to whole servers only (Model.split).
	levels CostFunc
	// pow2 says that levels also needs n and PerServer to be powers of
	// two (the doubling and halving algorithms, and the binomial tree,
	// whose deepest path takes a hop at every distance only then).
	pow2 bool
}

// costed reports whether the algorithm has a cost at all.
func (c costs) costed() bool { return c.flat != nil || c.levels != nil }

// levelsApply reports whether c.levels can cost a call on n ranks under m:
// it is set, m has two levels of whole servers, and where c.pow2 says so n
// and m.PerServer are powers of two.
func (c costs) levelsApply(n int, m Model) bool {
	_, p, ok := m.split(n)
	pow2 := func(x int) bool { return bits.OnesCount(uint(x)) == 1 }
	return c.levels != nil && ok && (!c.pow2 || pow2(n) && pow2(p))
}

// Predict returns the model's time in seconds for algorithm name serving op
// on n ranks with blocks of b bytes, or NaN when name does not serve op,
// has no model (native), or has none for m: hier on a model of one level,
// whose cost is +Inf so that auto never picks it. An algorithm blind to a
// second level of m is costed on the slower of its links (Model.flat).
func Predict(op Op, name string, n, b int, m Model) float64 {
	a, ok := lookup(op, name)
	if !ok || !a.costed() {
		return math.NaN()
	}
	if n <= 1 {
		return 0
	}
	c := a.predict(n, float64(b), m)
	if math.IsInf(c, 1) {
		return math.NaN()
	}
	return c
}

// predict is c's cost on n ranks with blocks of b bytes under m: its
// two-level cost where that applies, else its flat one on m.flat(n), which
// is m itself for a one-level model, or +Inf when it has none.
func (c costs) predict(n int, b float64, m Model) float64 {
	switch {
	case c.levelsApply(n, m):
		return c.levels(n, b, m)
	case c.flat == nil:
		return math.Inf(1)
	}
	return c.flat(n, b, m.flat(n))
}
