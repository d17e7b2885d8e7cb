package runctl

import (
	"errors"
	"testing"
	"time"
)

// TestSettle feeds a probe's agreement fake readings: it stops as
// soon as the best SettleBest agree, takes their median, and at the bounds
// (repetitions or time) gives up with the figure marked uncertain.
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readings []float64
		step     time.Duration // each repetition's time
		reps     int
		gbps     float64
		agreed   bool
		lo, hi   float64
	}{
		{"quiet: three alike", []float64{5, 5.1, 4.9, 1}, time.Millisecond, 3, 5, true, 4.9, 5.1},
		{"a loaded first reading is outvoted", []float64{0.24, 5.9, 5.8, 5.93}, time.Millisecond, 4, 5.9, true, 0.24, 5.93},
		{"the best three, not the last three", []float64{5, 1, 5.2, 2, 0.5, 5.1}, time.Millisecond, 6, 5.1, true, 0.5, 5.2},
		{"never agree: stopped by the count", []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}, time.Millisecond, SettleMaxReps, 1024, false, 1, 2048},
		{"never agree: stopped by the time", []float64{1, 2, 4, 8, 16, 32}, SettleMaxTime / 2, 2, 1.5, false, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			f, err := Settle(func(rep int) (Reading, error) {
				if rep != calls {
					t.Fatalf("repetition %d after %d calls", rep, calls)
				}
				calls++
				return Reading{Value: tc.readings[rep], Elapsed: time.Duration(rep+1) * tc.step}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if f.Reps != tc.reps || calls != tc.reps || f.Value != tc.gbps || f.Agreed != tc.agreed || f.Lo != tc.lo || f.Hi != tc.hi {
				t.Errorf("got %+v after %d calls, want %d repetitions, %v GB/s, agreed %v, %v..%v", f, calls, tc.reps, tc.gbps, tc.agreed, tc.lo, tc.hi)
			}
		})
	}
}

// TestSettleError: a failed repetition ends the probe with its error.
func TestSettleError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Settle(func(rep int) (Reading, error) {
		if rep == 1 {
			return Reading{}, boom
		}
		return Reading{Value: 1}, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
}
