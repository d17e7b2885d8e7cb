package sim_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/sim"
)

// sumAll adds every rank's values element by element.
func sumAll(all [][]float64) ([]float64, error) {
	out := make([]float64, len(all[0]))
	for _, v := range all {
		for i, x := range v {
			out[i] += x
		}
	}
	return out, nil
}

// TestMeet: the harness's calls in memory (backends.Rendezvous) give
// every rank the combined values of all, call after call, without moving
// a clock; a rank that does not join, or leaves, fails the others' call
// within its deadline, naming it, and every call after it.
func TestMeet(t *testing.T) {
	const n = 6
	tests := []struct {
		name string
		// absent, when not -1, is a rank that does not join the second
		// call; leaves says whether it closes its endpoint instead.
		absent int
		leaves bool
		want   string // in the others' error; "" for none
	}{
		{"every rank joins", -1, false, ""},
		{"a rank does not join", 4, false, "waited for rank 4"},
		{"a rank leaves", 2, true, "rank 2 left the world"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := sim.NewWorld(n, links)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, n)
			got := make([][]float64, n)
			for r := range n {
				wg.Go(func() {
					tr := w.Endpoint(r)
					if tc.leaves && r == tc.absent {
						defer tr.Close()
					}
					rv, ok := backends.RendezvousOf(tr)
					if !ok {
						errs[r] = errors.New("no rendezvous")
						return
					}
					for call := range 3 {
						if call == 1 && r == tc.absent {
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
						out, err := rv.Meet(ctx, []float64{float64(r), float64(call)}, sumAll)
						cancel()
						if err != nil {
							errs[r] = err
							return
						}
						got[r] = slices.Clone(out)
					}
				})
			}
			wg.Wait()
			for r := range n {
				if c := w.Endpoint(r).(backends.Clock).Now(); c != 0 {
					t.Errorf("rank %d: clock %v after the calls, want 0", r, c)
				}
				if r == tc.absent {
					continue
				}
				if tc.want == "" {
					if errs[r] != nil || !slices.Equal(got[r], []float64{15, 2 * n}) {
						t.Errorf("rank %d: %v, %v; want [15 %d]", r, got[r], errs[r], 2*n)
					}
					continue
				}
				if errs[r] == nil || !strings.Contains(errs[r].Error(), tc.want) {
					t.Errorf("rank %d: error %v, want one with %q", r, errs[r], tc.want)
				}
			}
		})
	}
}
