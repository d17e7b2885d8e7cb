package coll

import (
	"slices"
	"sync"
	"testing"
)

// TestDBTreesKept: the trees kept per rank count are the ones dbPlaces
// finds, whoever asks first, from many goroutines at once (run with
// -race), and costing calls leave them as they were.
func TestDBTreesKept(t *testing.T) {
	sizes := []int{2, 3, 5, 8, 13, 64, 100, 1000}
	var wg sync.WaitGroup
	for range 8 {
		for _, n := range sizes {
			wg.Go(func() {
				dbtreeAllReduceCost(n, 1<<20, DefaultModel)
				dbtreeBroadcastCost(n, 4096, DefaultModel)
			})
		}
	}
	wg.Wait()
	for _, n := range sizes {
		got := dbTreesOf(n)
		if dbTreesOf(n) != got {
			t.Errorf("%d ranks: trees found again, not kept", n)
		}
		for h := range 2 {
			if want := dbPlaces(dbTree{n: n, off: h}); !slices.Equal(got[h], want) {
				t.Errorf("%d ranks, tree %d: kept %v, want %v", n, h, got[h], want)
			}
		}
	}
}
