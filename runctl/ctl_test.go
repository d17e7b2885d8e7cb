package runctl

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestCtlShared: on sim, the control channel's calls in memory
// (Ctl.Shared) give what its collectives of messages give, on every rank,
// and move no rank's clock.
func TestCtlShared(t *testing.T) {
	const n = 5
	calls := []struct {
		name string
		do   func(ctx context.Context, c Ctl) ([]float64, error)
	}{
		{"allreduce max", func(ctx context.Context, c Ctl) ([]float64, error) {
			r := float64(c.Comm.Rank())
			return c.AllReduceFloats(ctx, dtype.Max, []float64{r * r, -r, 7})
		}},
		{"allreduce sum", func(ctx context.Context, c Ctl) ([]float64, error) {
			return c.AllReduceFloats(ctx, dtype.Sum, []float64{float64(c.Comm.Rank()), 0.5})
		}},
		{"allreduce avg", func(ctx context.Context, c Ctl) ([]float64, error) {
			return c.AllReduceFloats(ctx, dtype.Avg, []float64{float64(4 * c.Comm.Rank())})
		}},
		{"gather", func(ctx context.Context, c Ctl) ([]float64, error) {
			r := float64(c.Comm.Rank())
			return c.GatherFloats(ctx, []float64{r, 10 + r})
		}},
		{"broadcast", func(ctx context.Context, c Ctl) ([]float64, error) {
			return c.BroadcastFloats(ctx, []float64{float64(c.Comm.Rank() + 3)})
		}},
		{"barrier", func(ctx context.Context, c Ctl) ([]float64, error) { return nil, c.Barrier(ctx) }},
	}
	// run makes every call on every rank of a fresh world, in memory or
	// not, and returns what each rank got and its clock at the end.
	run := func(t *testing.T, shared bool) ([][][]float64, []time.Duration) {
		w, err := sim.NewWorld(n, sim.LinkModel{})
		if err != nil {
			t.Fatal(err)
		}
		got := make([][][]float64, n)
		clocks := make([]time.Duration, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for r := range n {
			wg.Go(func() {
				comm := coll.NewComm(w.Endpoint(r))
				c := Ctl{Comm: comm, Timeout: time.Minute}
				if shared {
					if c.Shared = SharedOf(comm); c.Shared == nil {
						errs[r] = fmt.Errorf("rank %d: sim offers no rendezvous", r)
						return
					}
				}
				for _, call := range calls {
					v, err := call.do(context.Background(), c)
					if err != nil {
						errs[r] = fmt.Errorf("%s: %w", call.name, err)
						return
					}
					got[r] = append(got[r], v)
				}
				clock, _ := comm.Clock()
				clocks[r] = clock.Now()
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return got, clocks
	}
	want, msgClocks := run(t, false)
	got, clocks := run(t, true)
	for r := range n {
		for i, call := range calls {
			if !slices.Equal(got[r][i], want[r][i]) {
				t.Errorf("rank %d, %s: %v in memory, %v as messages", r, call.name, got[r][i], want[r][i])
			}
		}
		if clocks[r] != 0 {
			t.Errorf("rank %d: clock %v after the calls in memory, want 0", r, clocks[r])
		}
	}
	if slices.Max(msgClocks) == 0 {
		t.Error("the calls as messages moved no clock: the comparison shows nothing")
	}
}

// TestCtlFixedAlgorithms: the control channel's calls run their fixed
// algorithms whatever the Comm's model makes auto pick. On 3 ranks under
// the simulated links' default model auto picks others (ring for the
// gather and the broadcast, oneshot for the allreduce), which the test
// checks first so that it shows something.
func TestCtlFixedAlgorithms(t *testing.T) {
	const n = 3
	l := sim.LinkModel{}.WithDefaults()
	model := coll.Model{Alpha: l.IntraAlpha.Seconds(), Beta: 1 / (l.IntraGBps * 1e9), Gamma: 1 / (l.ReduceGBps * 1e9),
		Copy: 1 / (l.CopyGBps * 1e9), Gap: l.Gap.Seconds()}
	calls := []struct {
		op   coll.Op
		want string
	}{
		{coll.Gather, "tree"},
		{coll.Broadcast, "tree"},
		{coll.AllReduce, "rd"},
	}
	differs := false
	for _, c := range calls {
		auto, err := coll.Choose(c.op, coll.Auto, 8, n, model)
		if err != nil {
			t.Fatal(err)
		}
		differs = differs || auto != c.want
	}
	if !differs {
		t.Fatal("auto picks the fixed algorithms under this model: the test shows nothing")
	}
	w, err := sim.NewWorld(n, sim.LinkModel{})
	if err != nil {
		t.Fatal(err)
	}
	used := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			comm := coll.NewComm(w.Endpoint(r))
			comm.SetModel(model)
			ctl := Ctl{Comm: comm, Timeout: time.Minute}
			for _, c := range calls {
				a := &coll.Args{Op: c.op, DType: dtype.FP64, RedOp: dtype.Max, Count: 1, Send: make([]byte, 8), Recv: make([]byte, 8)}
				if c.op == coll.Gather && r == 0 {
					a.Recv = make([]byte, 8*n)
				} else if c.op == coll.Gather {
					a.Recv = nil
				}
				got, err := ctl.run(context.Background(), a)
				if err != nil {
					errs[r] = fmt.Errorf("%v: %w", c.op, err)
					return
				}
				used[r] = append(used[r], got)
			}
		})
	}
	wg.Wait()
	for r := range n {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for i, c := range calls {
			if used[r][i] != c.want {
				t.Errorf("rank %d, %v: ran %s, want %s", r, c.op, used[r][i], c.want)
			}
		}
	}
}
