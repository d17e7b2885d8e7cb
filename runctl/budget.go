package runctl

import "math/bits"

// ProbeMin is the least message a probe or a calibration exchanges, however
// many ranks share its budget (ShareBudget).
const ProbeMin = 64 << 10

// ShareBudget returns budget shared among the two buffers of each of
// ranks ranks, rounded down to a power of two and kept in [lo, hi].
func ShareBudget(budget int64, ranks int, lo, hi int64) int64 {
	share := budget / 2 / int64(max(ranks, 1))
	if share < lo {
		return lo
	}
	return min(hi, int64(1)<<(bits.Len64(uint64(share))-1))
}
