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

// withinMeeter is the sim's rendezvous with a time limit of its own.
type withinMeeter interface {
	MeetWithin(ctx context.Context, limit time.Duration, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error)
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
		// within: the ranks give the time limit to MeetWithin rather
		// than in a context of their own.
		within bool
		want   string // in the others' error; "" for none
	}{
		{"every rank joins", -1, false, false, ""},
		{"a rank does not join", 4, false, false, "waited for rank 4"},
		{"a rank leaves", 2, true, false, "rank 2 left the world"},
		{"every rank joins, within a limit", -1, false, true, ""},
		{"a rank does not join a call within a limit", 4, false, true, "waited for rank 4: " + backends.ErrTimeout.Error()},
		{"a rank leaves, within a limit", 2, true, true, "rank 2 left the world"},
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
						v := []float64{float64(r), float64(call)}
						var out []float64
						var err error
						if tc.within {
							out, err = rv.(withinMeeter).MeetWithin(context.Background(), 200*time.Millisecond, v, sumAll)
						} else {
							ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
							out, err = rv.Meet(ctx, v, sumAll)
							cancel()
						}
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
