package proc

import (
	"testing"
	"time"
)

// TestYieldWaitGivesUpSlowYields drives an oversubscribed rank's yields
// with a fake clock: yields that come back at once go on until the budget
// and the wait sleeps after; a yield that kept the CPU away a time slice
// (other work ran) ends the yielding, and the waits of the next yieldPause
// sleep without yielding at all; after the pause a wait yields again.
func TestYieldWaitGivesUpSlowYields(t *testing.T) {
	tests := []struct {
		name       string
		perYield   time.Duration // how long each yield keeps the CPU away
		readyAfter int           // yields until ready reports true; 0 never
		done       bool
		yields     int // yields of the first wait
		slow       int // slow yields counted
	}{
		{"ranks only, nothing comes", time.Microsecond, 0, false, 104, 0},
		{"ranks only, the message comes", time.Microsecond, 3, true, 3, 0},
		{"other work, nothing comes", 2 * time.Millisecond, 0, false, 1, 1},
		{"other work, the message comes on the first yield", 2 * time.Millisecond, 1, true, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e endpoint
			now := time.Unix(1000, 0)
			yields := 0
			e.now = func() time.Time { return now }
			e.yield = func() { yields++; now = now.Add(tc.perYield) }
			ready := func() bool { return tc.readyAfter > 0 && yields >= tc.readyAfter }
			if got := e.yieldWait(ready); got != tc.done {
				t.Errorf("wait reported %v, want %v", got, tc.done)
			}
			if (tc.slow == 0 && yields != tc.yields) || (tc.slow > 0 && yields > yieldsPerCheck) {
				t.Errorf("%d yields, want %d (or at most %d when slow)", yields, tc.yields, yieldsPerCheck)
			}
			if e.slowYields != tc.slow {
				t.Fatalf("%d slow yields counted, want %d", e.slowYields, tc.slow)
			}
			// The next wait, at once: yields again only if none was slow.
			before := yields
			e.yieldWait(func() bool { return false })
			if again := yields > before; again != (tc.slow == 0) {
				t.Errorf("the next wait yielded %v, want %v", again, tc.slow == 0)
			}
			// After the pause every wait tries yielding again.
			now = now.Add(yieldPause)
			before = yields
			e.yieldWait(func() bool { return false })
			if yields == before {
				t.Errorf("no yield after the pause")
			}
		})
	}
}
