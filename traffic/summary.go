package traffic

import "fmt"

// Summary is what a matrix says about the ranks: the figures a row of
// variable-size all-to-all reports beside its time.
type Summary struct {
	// Ranks is the number of ranks.
	Ranks int
	// SentMin, SentMean and SentMax are over the bytes each rank sends in
	// all (its row's sum, its own diagonal cell included, as nccl-tests
	// counts it).
	SentMin, SentMax int64
	SentMean         float64
	// RecvMin, RecvMean and RecvMax are over the bytes each rank receives
	// in all (its column's sum).
	RecvMin, RecvMax int64
	RecvMean         float64
	// Imbalance is RecvMax over RecvMean: 1 when every rank receives the
	// same, up to Ranks when one rank receives everything; 1 when no rank
	// receives anything.
	Imbalance float64
	// HotRank is the rank that receives most (the lowest of equals).
	HotRank int
	// MaxBytes is the most any rank sends or receives: the size from
	// which nccl-tests' alltoallv computes algbw (max over ranks of the
	// larger of send and receive bytes).
	MaxBytes int64
	// Total is the bytes of the whole matrix.
	Total int64
}

// Summarize returns the figures of m.
func Summarize(m *Matrix) Summary {
	var acc accumulator
	acc.init(m.n)
	for src := 0; src < m.n; src++ {
		acc.add(src, m.Row(src))
	}
	return acc.summary()
}

// accumulator sums rows one at a time, so that a generator's matrix of
// any size is summarized in memory linear in its ranks.
type accumulator struct {
	sent, recv []int64
}

func (a *accumulator) init(n int) {
	a.sent, a.recv = make([]int64, n), make([]int64, n)
}

func (a *accumulator) add(src int, row []int64) {
	var s int64
	for dst, b := range row {
		s += b
		a.recv[dst] += b
	}
	a.sent[src] = s
}

func (a *accumulator) summary() Summary {
	n := len(a.sent)
	s := Summary{Ranks: n, SentMin: a.sent[0], RecvMin: a.recv[0]}
	var sentTotal int64
	for r := 0; r < n; r++ {
		sentTotal += a.sent[r]
		s.SentMin, s.SentMax = min(s.SentMin, a.sent[r]), max(s.SentMax, a.sent[r])
		s.RecvMin = min(s.RecvMin, a.recv[r])
		if a.recv[r] > s.RecvMax {
			s.RecvMax, s.HotRank = a.recv[r], r
		}
		s.MaxBytes = max(s.MaxBytes, a.sent[r], a.recv[r])
	}
	s.Total = sentTotal
	s.SentMean = float64(sentTotal) / float64(n)
	s.RecvMean = s.SentMean // every byte sent is received
	s.Imbalance = 1
	if s.RecvMean > 0 {
		s.Imbalance = float64(s.RecvMax) / s.RecvMean
	}
	return s
}

// String writes the summary on one line, in the words of a row's note:
// "recv min/mean/max 0/4096/16384 B, imbalance 4.00 at rank 3, send ...".
func (s Summary) String() string {
	return fmt.Sprintf("recv min/mean/max %d/%.0f/%d B, imbalance %.2f at rank %d; send min/mean/max %d/%.0f/%d B",
		s.RecvMin, s.RecvMean, s.RecvMax, s.Imbalance, s.HotRank, s.SentMin, s.SentMean, s.SentMax)
}
