package coll

import (
	"math"
	"testing"
)

// TestInterShared checks the link between servers that a server's ranks
// share (Model.InterShared) against two facts independent of the
// formulas: where every rank of a server crosses at once (a direct
// alltoall, hier's level between servers, multiring's channels) sharing
// a link of bandwidth B is the same as a link a rank of B/P; where one
// rank a server crosses (a ring laid out server by server, sendrecv to the
// next rank) sharing changes nothing.
func TestInterShared(t *testing.T) {
	const p, n, b = 4, 16, 4 << 20
	base := Model{Alpha: 2e-6, Beta: 1 / 50e9, Gamma: 1 / 40e9, PerServer: p, InterAlpha: 10e-6, InterBeta: 1 / 10e9}
	shared := base
	shared.InterShared = true
	slower := base
	slower.InterBeta *= p
	tests := []struct {
		op   Op
		algo string
		want Model // the per-rank model the shared one must cost alike
	}{
		{AllToAll, "direct", slower},
		{AllReduce, "hier", slower},
		{AllReduce, "multiring", slower},
		{AllGather, "multiring", slower},
		{AllReduce, "ring", base},
		{SendRecv, "ring", base},
	}
	for _, tc := range tests {
		got, want := Predict(tc.op, tc.algo, n, b, shared), Predict(tc.op, tc.algo, n, b, tc.want)
		if !(got > 0) || math.Abs(got-want) > 1e-9*want {
			t.Errorf("%v %s: shared link %.6g s, want %.6g s", tc.op, tc.algo, got, want)
		}
	}
}
