package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPairQueue: a pair's timings, kept in a queue, come back to the
// receive of the same number whatever order the receives complete in,
// against a map of what was posted; a number never posted, or taken
// already, gives the zero timing.
func TestPairQueue(t *testing.T) {
	tests := []struct {
		name string
		// window is how many sends are posted ahead of the receives;
		// shuffle completes each window's receives out of order.
		window  int
		shuffle bool
	}{
		{"one at a time", 1, false},
		{"in order, 8 ahead", 8, false},
		{"out of order, 8 ahead", 8, true},
		{"out of order, 100 ahead", 100, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.window)))
			p := newPair()
			want := map[uint64]timing{}
			for range 50 {
				var ks []uint64
				for range tc.window {
					at := timing{left: time.Duration(rng.Int64N(1e9)), arrive: time.Duration(rng.Int64N(1e9))}
					want[p.sent] = at
					p.post(at)
					ks = append(ks, p.next())
				}
				if tc.shuffle {
					rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
				}
				for _, k := range ks {
					if got := p.take(k); got != want[k] {
						t.Fatalf("send %d: %+v, want %+v", k, got, want[k])
					}
					if again := p.take(k); again != (timing{}) {
						t.Fatalf("send %d taken twice: %+v", k, again)
					}
				}
			}
			if got := p.take(p.sent + 3); got != (timing{}) {
				t.Errorf("a send never posted: %+v", got)
			}
			if len(p.at)-p.head != 0 || cap(p.at) > 4*tc.window+8 {
				t.Errorf("%d slots left, capacity %d after %d windows of %d", len(p.at)-p.head, cap(p.at), 50, tc.window)
			}
		})
	}
}
