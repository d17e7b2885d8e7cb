package scenario

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/world"
)

// TestCombineSlowestRank: a run's step figures are one rank's iterations,
// the rank whose steps took longest in all, with that rank's breakdown;
// not each iteration's slowest rank, whose steps (here 10, 9, 10, 12: 41
// in all) add up to more than either rank's run lasted (22 and 25).
func TestCombineSlowestRank(t *testing.T) {
	const iters = 4
	// Per rank and iteration: step, compute, then the one domain's
	// communication and exposed time (scenSampleLen(1) values).
	steps := [][]float64{{10, 1, 10, 1}, {2, 9, 2, 12}}
	wrong := [][]float64{{1, 0, 3}, {0, 2, 4}} // per step, then injected
	w := shm.NewWorld(2)
	res := make([]*scenResult, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for rk := range 2 {
		wg.Go(func() {
			r := &scenRank{rank: rk, domains: []string{"tp"}, world: coll.NewComm(w.Endpoint(rk))}
			r.o.World = world.World{Timeout: 10 * time.Second}
			k := scenSampleLen(1)
			samples := make([]float64, iters*k)
			for i, s := range steps[rk] {
				samples[i*k] = s
				samples[i*k+1] = s / 2
				samples[i*k+2] = s / 4
				samples[i*k+3] = s / 8
			}
			res[rk], errs[rk] = r.combine(context.Background(), iters, samples, wrong[rk])
		})
	}
	wg.Wait()
	for rk, got := range res {
		if errs[rk] != nil {
			t.Fatalf("rank %d: %v", rk, errs[rk])
		}
		want := map[string][2]float64{
			"step": {got.step, 25}, "min": {got.stepMin, 2}, "max": {got.stepMax, 12},
			"compute": {got.compute, 12.5}, "comm": {got.comm[0], 6.25}, "exposed": {got.exposed[0], 3.125},
		}
		for name, v := range want {
			if math.Abs(v[0]-v[1]) > 1e-12 {
				t.Errorf("rank %d: %s %v, want %v (rank 1's)", rk, name, v[0], v[1])
			}
		}
		if got.iters != iters || got.wrong[0] != 1 || got.wrong[1] != 2 || got.injected != 7 {
			t.Errorf("rank %d: iters %d wrong %v injected %d, want %d [1 2] 7", rk, got.iters, got.wrong, got.injected, iters)
		}
	}
}
