package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/inject"
)

// TestSimInjectedHolds: on sim, --inject's delay and bw hold a message on
// its sender's port, as a slower link would, and slow holds the rank's
// virtual clock. On 2 ranks recursive doubling is one exchange per call,
// and calls run back to back, so a row's period is the longest of three
// cycles: the call without faults (the exchange's latency and transfer,
// then the reduction); rank 0's port, busy for each message to rank 1 its
// transfer plus the link's hold; and rank 1, held before each call, then
// reducing (its peer's message arrived meanwhile). The first call can hide
// part of a hold in the skew with which the ranks leave the barrier before
// the row, so the row has many calls.
func TestSimInjectedHolds(t *testing.T) {
	const bytes = 64 << 10
	base := simPlan(bytes)
	base.Ranks, base.Algo, base.Iters = 2, "rd", 50
	_, plain := runOneRow(t, base)
	transfer := bytes / (base.LinkGBps * 1e3)                            // us
	reduce := plain.TimeUS - simOwn(base).Alpha.Seconds()*1e6 - transfer // us
	tests := []struct {
		spec       string
		link, rank float64 // us held
	}{
		{"delay=20us@link=0-1", 20, 0},
		{"bw=1GB/s@link=0-1", bytes / 1e3, 0},
		{"slow=30us@rank=1", 0, 30},
		{"delay=20us@link=0-1;slow=30us@rank=1", 20, 30},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			p := base
			var err error
			if p.Inject, err = inject.Parse(tc.spec); err != nil {
				t.Fatal(err)
			}
			p.InjectText = tc.spec
			if err := p.Validate(); err != nil {
				t.Fatalf("refused on sim: %v", err)
			}
			_, rec := runOneRow(t, p)
			want := max(plain.TimeUS, tc.link+transfer, tc.rank+reduce)
			if math.Abs(rec.TimeUS-want) > 0.5 {
				t.Errorf("%.3f us a call (%.3f us without the fault), want %.3f", rec.TimeUS, plain.TimeUS, want)
			}
		})
	}
}

// TestSimOverlap: on sim, --overlap's compute is held on the rank's clock
// beside the collective, which the simulated links move without the CPU:
// the compute alone takes exactly its amount, and an overlapped iteration
// the longer of the two, so the overlap hides all of the shorter one. With
// auto and buckets, each bucket's share of the compute (its rank's mean
// time over the number of buckets) runs beside that bucket.
func TestSimOverlap(t *testing.T) {
	const bytes = 1 << 20
	for _, tc := range []struct {
		name    string
		overlap time.Duration
		auto    bool
		fusion  []int
	}{
		{name: "shorter", overlap: 10 * time.Microsecond},
		{name: "longer", overlap: 2 * time.Millisecond},
		{name: "auto in buckets", auto: true, fusion: []int{4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := simPlan(bytes)
			p.Overlap, p.OverlapAuto, p.Fusion = tc.overlap, tc.auto, tc.fusion
			if err := p.Validate(); err != nil {
				t.Fatalf("refused on sim: %v", err)
			}
			var c capture
			if _, err := Run(context.Background(), p, &c); err != nil {
				t.Fatal(err)
			}
			rec := c.records[len(c.records)-1] // the row in buckets, with --fusion
			compute := tc.overlap.Seconds() * 1e6
			if tc.auto {
				compute = rec.TimeUS
			}
			if math.Abs(rec.ComputeUS-compute) > 0.5 {
				t.Errorf("compute alone %.3f us, want %.3f", rec.ComputeUS, compute)
			}
			if want := max(rec.TimeUS, compute); math.Abs(rec.TotalUS-want) > 1 {
				t.Errorf("overlapped %.3f us with the collective alone %.3f us and the compute %.3f us: want %.3f", rec.TotalUS, rec.TimeUS, rec.ComputeUS, want)
			}
			if math.Abs(rec.OverlapEff-1) > 0.01 {
				t.Errorf("efficiency %.4f, want 1", rec.OverlapEff)
			}
		})
	}
}

// TestSkewWithoutBarrierWaits: the straggler figures count a rank's waits
// in its timed iterations only. With -z 3 a barrier before each iteration
// waits for the straggler too; counted in, it would make the others look
// less busy than they are and the skew larger than without the barrier.
// On sim, with rank 1 held 30 us before each call, both rows name rank 1
// and give it the same skew.
func TestSkewWithoutBarrierWaits(t *testing.T) {
	var got [2]float64
	for i, z := range []Blocking{BlockingNone, BlockingIterBarrier} {
		p := simPlan(64 << 10)
		p.Algo, p.Iters, p.Blocking = "rd", 50, z
		const spec = "slow=30us@rank=1"
		var err error
		if p.Inject, err = inject.Parse(spec); err != nil {
			t.Fatal(err)
		}
		p.InjectText = spec
		_, rec := runOneRow(t, p)
		if rec.SlowRank != 1 {
			t.Errorf("-z %d: slow rank %d, want 1", z, rec.SlowRank)
		}
		got[i] = rec.Skew
	}
	if math.Abs(got[1]-got[0]) > 0.05*got[0] {
		t.Errorf("skew %.3f with -z 3, %.3f without: want the same", got[1], got[0])
	}
}
