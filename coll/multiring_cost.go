package coll

// multiringStep is one step of multiring on two levels, every channel
// moving its part of blk bytes (blk/P each): a rank posts P messages a
// gap apart, P-1 to ranks of its server on the fast link and one to
// another server on the slow one, the two ports side by side, each
// sending its messages back to back (after the gaps, where the sender's
// CPU moves them). With reduces, every message is reduced on arrival:
// the earlier group's reductions hide behind the later group's transfer
// where they can, the later group's follow it (a fused backend's receiver
// makes every pass itself, from the first arrival on).
func multiringStep(n int, blk float64, reduces bool, m Model) float64 {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.interLevel()
	s := blk / float64(p)
	gaps := float64(p-1) * intra.gap()
	group := func(l Model, k float64) float64 {
		per := s * l.Beta
		if m.SenderMoves {
			return l.Alpha + per + gaps + (k-1)*per
		}
		return l.Alpha + per + max(gaps, (k-1)*per)
	}
	kA, kB := float64(p-1), 1.0
	endA, endB := group(intra, kA), group(inter, kB)
	if endA > endB {
		endA, endB, kA, kB = endB, endA, kB, kA
	}
	if !reduces {
		return endB
	}
	rA, rB := kA*s*m.Gamma, kB*s*m.Gamma
	if m.Fused {
		return max(endB, max(intra.Alpha, inter.Alpha)+rA+rB)
	}
	return max(endB, endA+rA) + rB
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
