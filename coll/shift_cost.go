package coll

import (
	"iter"
	"slices"
)

// Two-level costs of the shifted exchanges: pairwise all-to-all and
// Bruck's allgather and all-to-all. At each step every rank r sends to
// rank r+d and receives from rank r-d, for one distance d (mod n). Unless
// d is a multiple of PerServer, such a step crosses servers for some ranks
// (those within d of their server's end) and not for others, so no step
// can be charged one link. But a rank's step ends when its own message
// has left its port and its peer's has arrived, and its peer sent that
// when the peer's previous step ended: the steps chain up through the
// ranks, and the time is the latest end over every such chain.
// shiftLevels follows them as the simulated backend does, keeping every
// rank's clock through the steps. Turning the world by one server maps the
// pattern onto itself, so the P ranks of one server stand for all of
// them: the cost takes P clocks per step, not n. Each exchange's file
// (pairwise.go, bruck.go, bruck_alltoall.go) gives shiftLevels its steps.

// shiftStep is one step of a shifted exchange: every rank sends bytes to
// the rank shift places on (mod n) and receives as many from the rank
// shift places back, after pre seconds of its own work (packing what it
// sends) and followed by post seconds (unpacking what it received).
type shiftStep struct {
	shift            int
	bytes, pre, post float64
}

// sharing is how many ranks of a server share its link between servers
// in a step that shifts by d on n ranks of p a server: those whose peer
// i+d is on another server, where the ranks share it (InterShared); 1
// where each has its own.
func (m Model) sharing(d, n, p int) int {
	if !m.InterShared {
		return 1
	}
	k := 0
	for i := range p {
		if i+d >= p && i+d < n {
			k++
		}
	}
	return max(k, 1)
}

// shiftLevels is the time of a shifted exchange on n ranks of two levels
// under m: every rank does start seconds of its own work, then the steps,
// then end seconds more. A rank's step ends when its message has left its
// port (on its own link) and its peer's has arrived (that link's latency
// and transfer after the peer's step began), and the unpacking is done.
// It takes P clocks per step, so a pairwise exchange costs O(nP): auto
// predicts on every rank before every call, so the loop is kept lean.
func shiftLevels(n int, start float64, steps iter.Seq[shiftStep], end float64, m Model) float64 {
	_, p, _ := m.split(n)
	intra, inter := m.intraLevel(), m.crossing(1)
	// clock[i] is when rank i of the first server ended its last step,
	// and with it every rank i+kP.
	clock, next := make([]float64, p), make([]float64, p)
	for i := range clock {
		clock[i] = start
	}
	for st := range steps {
		d := mod(st.shift, n)
		dp := d % p
		sendIn, sendOut := st.bytes*intra.Beta, st.bytes*inter.Beta*float64(m.sharing(d, n, p))
		recvIn, recvOut := intra.Alpha+sendIn, inter.Alpha+sendOut
		for i := range p {
			// Rank i sends to rank i+d, on its own server if that is
			// below P or wraps round past n; it receives from rank
			// i-d, on its own server if that is not below 0 or wraps
			// round into this server, and whose place in its server j
			// is i-d mod P.
			sent, arrived := sendOut, recvOut
			if i+d < p || i+d >= n {
				sent = sendIn
			}
			if i >= d || i-d+n < p {
				arrived = recvIn
			}
			j := i - dp
			if j < 0 {
				j += p
			}
			next[i] = max(clock[i]+st.pre+sent, clock[j]+st.pre+arrived) + st.post
		}
		clock, next = next, clock
	}
	return slices.Max(clock) + end
}
