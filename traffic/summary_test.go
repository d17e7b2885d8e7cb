package traffic

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *Matrix
		want Summary
	}{
		{"one rank", rows(1, 64), Summary{Ranks: 1, SentMin: 64, SentMax: 64, SentMean: 64,
			RecvMin: 64, RecvMax: 64, RecvMean: 64, Imbalance: 1, MaxBytes: 64, Total: 64}},
		{"all zero", rows(2, 0, 0, 0, 0), Summary{Ranks: 2, Imbalance: 1}},
		// Everyone sends to rank 2: it receives 3 x 48, the mean is 48.
		{"one hot receiver", rows(3, 0, 0, 48, 0, 0, 48, 0, 0, 48), Summary{Ranks: 3,
			SentMin: 48, SentMax: 48, SentMean: 48, RecvMin: 0, RecvMax: 144, RecvMean: 48,
			Imbalance: 3, HotRank: 2, MaxBytes: 144, Total: 144}},
		// Rows 16+32, 0+16: sent 48 and 16, received 16 and 48, with a tie
		// in the largest of sent and received.
		{"uneven", rows(2, 16, 32, 0, 16), Summary{Ranks: 2, SentMin: 16, SentMax: 48, SentMean: 32,
			RecvMin: 16, RecvMax: 48, RecvMean: 32, Imbalance: 1.5, HotRank: 1, MaxBytes: 48, Total: 64}},
		{"ties go to the lowest rank", rows(2, 16, 16, 16, 16), Summary{Ranks: 2, SentMin: 32, SentMax: 32,
			SentMean: 32, RecvMin: 32, RecvMax: 32, RecvMean: 32, Imbalance: 1, MaxBytes: 32, Total: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.m)
			if math.Abs(got.Imbalance-tc.want.Imbalance) > 1e-12 {
				t.Errorf("imbalance %v, want %v", got.Imbalance, tc.want.Imbalance)
			}
			got.Imbalance = tc.want.Imbalance
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSummaryString(t *testing.T) {
	got := Summarize(rows(3, 0, 0, 48, 0, 0, 48, 0, 0, 48)).String()
	want := "recv min/mean/max 0/48/144 B, imbalance 3.00 at rank 2; send min/mean/max 48/48/48 B"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
