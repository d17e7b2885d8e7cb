package coll

// Two-level costs that follow an algorithm's messages. On a two-level
// model the algorithms blind to the topology are costed on the slower link
// for every step (Model.flat), which overstates most of them:
//
//   - ring: laid out server by server, one link in P crosses servers; a
//     rank whose next block is ready sends it as soon as its port is free,
//     so the crossing links carry their blocks back to back while the
//     latencies and reductions of the other steps hide behind them;
//   - recursive doubling and halving: with ranks numbered server by server
//     and powers of two throughout, the partner of a step at distance
//     d < PerServer is on the same server, so only the steps at larger
//     distances cross;
//   - the direct ones, where every rank sends to every other at once: a
//     rank's messages to its own server leave on the fast link and those to
//     other servers on the slow one, side by side;
//   - the rooted ones, binomial tree and chain (levelcost_tree.go): their
//     edges that cross servers are known from the layout;
//   - the shifted exchanges, pairwise and Bruck's (levelcost_shift.go):
//     every rank sends to the rank a fixed distance on, so a step crosses
//     servers for some ranks and not others, and the ranks' steps chain up;
//   - the double binary tree (dbtree_cost.go), whose cost follows every
//     rank's clock through the steps on one level or two.
//
// Each algorithm registers its two-level cost with its run and its flat
// cost (costs, register).

// level returns the one-level model of the link between ranks at distance
// d.
func (m Model) level(d int) Model {
	if d < m.PerServer {
		return m.intraLevel()
	}
	return m.interLevel()
}

// ringLevels is a ring of steps steps, each moving a block of blk bytes to
// the next rank, reduces of which also reduce it, on two levels: the
// slower of the crossing links' ports, which send their steps' blocks back
// to back (one latency at the end), and a block's way round the ring,
// which crosses servers on one step in P and pays each step's latency,
// transfer and reduction. On one level the second is the ring's cost.
func ringLevels(n int, steps, reduces, blk float64, m Model) float64 {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.interLevel()
	port := steps*blk*inter.Beta + inter.Alpha
	cross := 1 / float64(p)
	move := steps * (cross*(inter.Alpha+blk*inter.Beta) + (1-cross)*(intra.Alpha+blk*intra.Beta))
	return max(port, m.received(move, reduces*blk))
}

// ringAllReduceLevelCost: 2(n-1) steps of 1/n of the vector, the first
// n-1 reducing it.
func ringAllReduceLevelCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	return ringLevels(n, 2*k, k, b/float64(n), m)
}

// ringReduceScatterLevelCost: n-1 steps, each moving and reducing one
// block.
func ringReduceScatterLevelCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	return ringLevels(n, k, k, b, m)
}

// ringAllGatherLevelCost: n-1 steps, each moving one block.
func ringAllGatherLevelCost(n int, b float64, m Model) float64 {
	return ringLevels(n, float64(n-1), 0, b, m)
}

// rdAllReduceLevelCost: log2 n exchanges of the whole vector at distances
// 1, 2, 4, ..., each received and reduced.
func rdAllReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		l := m.level(d)
		t += l.Alpha + l.moveReduce(b)
	}
	return t
}

// rhdAllReduceLevelCost: recursive halving at distances n/2, n/4, ..., 1,
// exchanging and reducing half of what is left each time, then recursive
// doubling back at distances 1, 2, ..., n/2, moving the same amounts.
func rhdAllReduceLevelCost(n int, b float64, m Model) float64 {
	var t float64
	part := b
	for d := n / 2; d >= 1; d /= 2 {
		part /= 2
		l := m.level(d)
		t += l.Alpha + l.moveReduce(part) + l.Alpha + part*l.Beta
	}
	return t
}

// rdAllGatherLevelCost: exchanges at distances 1, 2, 4, ..., each of the d
// blocks gathered so far.
func rdAllGatherLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := 1; d < n; d *= 2 {
		l := m.level(d)
		t += l.Alpha + float64(d)*b*l.Beta
	}
	return t
}

// rhdReduceScatterLevelCost: halving at distances n/2, n/4, ..., 1, each
// exchanging and reducing d blocks, then the copy of the result into
// place.
func rhdReduceScatterLevelCost(n int, b float64, m Model) float64 {
	var t float64
	for d := n / 2; d >= 1; d /= 2 {
		l := m.level(d)
		t += l.Alpha + l.moveReduce(float64(d)*b)
	}
	return t + m.copy(b)
}

// directLevels is one direct step on two levels: every rank sends a
// message of s bytes to each of the others, those to the P-1 ranks of its
// server on the fast link and those to the n-P others on the slow one, the
// two side by side. A rank hands its messages to its ports a gap apart
// (the fast link's model's), and a port sends each once the one before
// has left, so a group's last message leaves after the later of all the
// n-2 gaps and its own messages back to back (both, when the sender's CPU
// moves them), and arrives a latency later. It returns when each group's last message has arrived, the
// earlier group first, and how many messages each has.
func directLevels(n int, s float64, m Model) (endA, endB, kA, kB float64) {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.interLevel()
	gaps := float64(n-2) * intra.gap()
	group := func(l Model, k float64) float64 {
		per := s * l.Beta
		if m.SenderMoves {
			return l.Alpha + per + gaps + (k-1)*per
		}
		return l.Alpha + per + max(gaps, (k-1)*per)
	}
	kA, kB = float64(p-1), float64(n-p)
	endA, endB = group(intra, kA), group(inter, kB)
	if endA > endB {
		endA, endB, kA, kB = endB, endA, kB, kA
	}
	return endA, endB, kA, kB
}

// directMove is directLevels' step without reductions: until the later
// group has arrived.
func directMove(n int, s float64, m Model) float64 {
	_, end, _, _ := directLevels(n, s, m)
	return end
}

// directReceived is directLevels' step with every message reduced on
// arrival: the earlier group's reductions hide behind the later group's
// transfer where they can, the later group's follow it. With a fused
// backend a message's transfer is its reduction's pass, and the receiver
// makes every pass itself, from the first arrival on.
func directReceived(n int, s float64, m Model) float64 {
	endA, endB, kA, kB := directLevels(n, s, m)
	rA, rB := kA*s*m.Gamma, kB*s*m.Gamma
	if m.Fused {
		return max(endB, max(m.intraLevel().Alpha, m.interLevel().Alpha)+rA+rB)
	}
	return max(endB, endA+rA) + rB
}

// oneshotAllReduceLevelCost: one direct step of the whole vector, n-1
// vectors reduced.
func oneshotAllReduceLevelCost(n int, b float64, m Model) float64 {
	return directReceived(n, b, m)
}

// twoshotAllReduceLevelCost: two direct steps of 1/n of the vector; the
// first reduces n-1 of them.
func twoshotAllReduceLevelCost(n int, b float64, m Model) float64 {
	s := b / float64(n)
	return directReceived(n, s, m) + directMove(n, s, m)
}

// directReduceScatterLevelCost: one direct step of a block each, n-1
// blocks reduced.
func directReduceScatterLevelCost(n int, b float64, m Model) float64 {
	return directReceived(n, b, m)
}

// directAllToAllLevelCost: one direct step of a block each.
func directAllToAllLevelCost(n int, b float64, m Model) float64 {
	return directMove(n, b, m)
}
