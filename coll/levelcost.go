package coll

import "math/bits"

// Two-level costs that follow an algorithm's steps. On a two-level model
// the algorithms blind to the topology are costed on the slower link for
// every step (Model.flat), which overstates recursive doubling and halving:
// with ranks numbered server by server and powers of two throughout, the
// partner of a step at distance d < PerServer is on the same server. For
// those, levelCosts gives costs that charge each step its own link.

// levelCosts holds the step-aware two-level costs by collective and
// algorithm name.
var levelCosts = map[Op]map[string]CostFunc{
	AllReduce: {"rd": rdAllReduceLevelCost, "rhd": rhdAllReduceLevelCost},
}

// stepLevels reports whether the steps of a doubling or halving algorithm
// on n ranks fall on one level each under m: n and m.PerServer powers of
// two, with more than one server.
func stepLevels(n int, m Model) bool {
	p := m.PerServer
	return p > 0 && p < n && bits.OnesCount(uint(n)) == 1 && bits.OnesCount(uint(p)) == 1
}

// level returns the one-level model of the link between ranks at distance
// d.
func (m Model) level(d int) Model {
	if d < m.PerServer {
		return m.intraLevel()
	}
	return m.interLevel()
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
