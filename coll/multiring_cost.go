package coll

// multiringStep is what one step of multiring's flow adds on two levels
// in the steady state, every channel moving its part of blk bytes (blk/P
// each, s): the slowest of what a rank's step needs of each of its
// resources, as the channels run apart (flow) and whatever is not the
// slowest hides behind it.
//
//   - issue: a rank hands out P messages a step, a gap apart;
//   - ports: P-1 messages of s bytes leave on the link inside the server,
//     one on the link between servers (and as many arrive);
//   - the chain: a channel's step starts when its step before has come,
//     a latency and a transfer of its slower hop after it was handed out,
//     and the channels before it in the rank's order have handed theirs
//     out (a gap, or a transfer inside the server where that is shorter);
//   - with reduces, the rank reduces P messages of s bytes a step, one
//     after another, before it hands out the next (not on a fused
//     backend, whose receiver reduces as it moves the data).
//
// On a transport whose sender's CPU moves its messages (SenderMoves),
// the gaps and the transfers add up instead.
func multiringStep(n int, blk float64, reduces bool, m Model) float64 {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.interLevel()
	s := blk / float64(p)
	g := intra.gap()
	xa, xe := s*intra.Beta, s*inter.Beta
	red := 0.0
	if reduces {
		red = s * m.Gamma
		if m.Fused {
			red = max(0, red-max(xa, xe))
		}
	}
	issue := float64(p) * g
	if m.SenderMoves {
		issue += float64(p-1)*xa + xe
	}
	ports := max(float64(p-1)*xa, xe)
	chain := max(intra.Alpha+xa, inter.Alpha+xe) + min(g, xa) + red
	work := float64(p)*red + g
	return max(issue, ports, chain, work)
}

// multiringAllReduceCost: n-1 reducing steps and n-1 moving ones, each
// of 1/n of the vector spread over the channels. +Inf without two levels
// (costs.levels applies only with them).
func multiringAllReduceCost(n int, b float64, m Model) float64 {
	k := float64(n - 1)
	blk := b / float64(n)
	return k * (multiringStep(n, blk, true, m) + multiringStep(n, blk, false, m))
}

// multiringReduceScatterCost: n-1 steps, each moving and reducing one
// block over the channels.
func multiringReduceScatterCost(n int, b float64, m Model) float64 {
	return float64(n-1) * multiringStep(n, b, true, m)
}

// multiringAllGatherCost: the copy of the rank's own block into place,
// then n-1 steps, each moving one block over the channels.
func multiringAllGatherCost(n int, b float64, m Model) float64 {
	return m.copy(b) + float64(n-1)*multiringStep(n, b, false, m)
}
