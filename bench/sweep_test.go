package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
)

func TestSizes(t *testing.T) {
	tests := []struct {
		name     string
		min, max int64
		factor   float64
		step     int64
		want     []int64
	}{
		{name: "doubling includes the end", min: 1024, max: 8192, factor: 2, want: []int64{1024, 2048, 4096, 8192}},
		{name: "end not landed on", min: 1024, max: 5000, factor: 2, want: []int64{1024, 2048, 4096}},
		{name: "single size", min: 32 << 20, max: 32 << 20, factor: 2, want: []int64{32 << 20}},
		{name: "fractional factor", min: 100, max: 300, factor: 1.5, want: []int64{100, 150, 225}},
		{name: "small factor still advances", min: 1, max: 4, factor: 1.1, want: []int64{1, 2, 3, 4}},
		{name: "from zero by factor", min: 0, max: 2, factor: 2, want: []int64{0, 1, 2}},
		{name: "additive", min: 0, max: 10, step: 4, want: []int64{0, 4, 8}},
		{name: "additive includes the end", min: 1, max: 9, step: 4, want: []int64{1, 5, 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{Sweep: Sweep{MinBytes: tc.min, MaxBytes: tc.max, StepFactor: tc.factor, StepBytes: tc.step}}
			if got := p.Sizes(); !slices.Equal(got, tc.want) {
				t.Errorf("Sizes() = %v, want %v", got, tc.want)
			}
		})
	}
	p := Plan{Sweep: Sweep{MinBytes: 1024, MaxBytes: 268435456, StepFactor: 2}}
	if got := len(p.Sizes()); got != 19 {
		t.Errorf("1 KiB..256 MiB by 2: %d sizes, want 19", got)
	}
}

func TestRowCount(t *testing.T) {
	tests := []struct {
		op        coll.Op
		dt        dtype.DType
		n         int
		size      int64
		wantCount int
		wantBytes int64
	}{
		{coll.AllReduce, dtype.FP16, 8, 1024, 512, 1024},
		{coll.AllReduce, dtype.FP32, 8, 1023, 255, 1020},
		{coll.AllGather, dtype.FP32, 8, 1024, 32, 1024},
		{coll.AllGather, dtype.FP32, 3, 1024, 85, 1020},
		{coll.ReduceScatter, dtype.FP64, 7, 1000, 17, 952},
		{coll.AllToAll, dtype.Int8, 5, 12, 2, 10},
		{coll.Gather, dtype.FP32, 8, 16, 0, 0},
		{coll.Broadcast, dtype.Uint64, 8, 17, 2, 16},
		{coll.SendRecv, dtype.BF16, 2, 3, 1, 2},
	}
	for _, tc := range tests {
		c, b := payload.RowCount(tc.op, tc.dt, tc.n, tc.size)
		if c != tc.wantCount || b != tc.wantBytes {
			t.Errorf("payload.RowCount(%v, %v, %d, %d) = %d, %d; want %d, %d", tc.op, tc.dt, tc.n, tc.size, c, b, tc.wantCount, tc.wantBytes)
		}
	}
}

func TestRows(t *testing.T) {
	p := DefaultPlan()
	p.Ops = []coll.Op{coll.AllReduce, coll.Broadcast, coll.AllToAll}
	p.RedOps = []dtype.ReduceOp{dtype.Sum, dtype.Max}
	p.Ranks, p.Root = 3, -1
	p.MinBytes, p.MaxBytes = 6, 24
	p.Placements = []Placement{OutOfPlace, InPlace}
	rows := p.Rows()
	count := map[coll.Op]int{}
	for _, r := range rows {
		count[r.Op]++
		if r.Op.Reduces() != (r.RedOp != 0) {
			t.Errorf("%v row with redop %v", r.Op, r.RedOp)
		}
		if r.Op.Rooted() != (r.Root >= 0) {
			t.Errorf("%v row with root %d", r.Op, r.Root)
		}
	}
	// allreduce: 2 redops x sizes {6->4 (1 elt... fp32: 6->4, 12, 24} x 2 placements.
	if count[coll.AllReduce] != 2*3*2 {
		t.Errorf("allreduce rows = %d, want 12", count[coll.AllReduce])
	}
	// broadcast: every root (3) x 3 sizes x 2 placements.
	if count[coll.Broadcast] != 3*3*2 {
		t.Errorf("broadcast rows = %d, want 18", count[coll.Broadcast])
	}
	// alltoall on 3 ranks of fp32: 6 and 12 both round to 12... 6 -> 0, 12 -> 12, 24 -> 24.
	if count[coll.AllToAll] != 3*2 {
		t.Errorf("alltoall rows = %d, want 6", count[coll.AllToAll])
	}
	if rows[0].Place != OutOfPlace || rows[1].Place != InPlace || rows[0].Bytes != rows[1].Bytes {
		t.Errorf("placements of one shape are not adjacent: %+v %+v", rows[0], rows[1])
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Plan)
		// want is a substring of the error, which names fields, not
		// flags (cmd shows them as flags); "" for valid.
		want string
	}{
		{"default", func(*Plan) {}, ""},
		{"zero ranks", func(p *Plan) { p.Ranks = 0 }, "Ranks 0"},
		{"min above max", func(p *Plan) { p.MinBytes, p.MaxBytes = 2048, 1024 }, "MinBytes 2048 is larger than MaxBytes 1024"},
		{"factor 1", func(p *Plan) { p.StepFactor = 1 }, "StepFactor 1"},
		{"factor below 1", func(p *Plan) { p.StepFactor = 0.5 }, "StepFactor 0.5"},
		{"no iters", func(p *Plan) { p.Iters = 0 }, "Iters 0"},
		{"negative warmup", func(p *Plan) { p.Warmup = -1 }, "Warmup -1"},
		{"root out of range", func(p *Plan) { p.Root = 8 }, "Root 8"},
		{"unknown backend", func(p *Plan) { p.Backend = "carrier-pigeon" }, "Backend"},
		{"algo that does not serve", func(p *Plan) { p.Algo = "pairwise" }, `Algo "pairwise"`},
		{"algos", func(p *Plan) { p.Algo = "auto, ring,rd" }, ""},
		{"one of the algos does not serve", func(p *Plan) { p.Algo = "auto,pairwise" }, `Algo "pairwise"`},
		{"algo listed twice", func(p *Plan) { p.Algo = "ring,rd,ring" }, "ring is listed twice"},
		{"empty algo in the list", func(p *Plan) { p.Algo = "ring,,rd" }, "an empty name"},
		{"too much memory", func(p *Plan) { p.MaxBytes, p.MemLimit = 1<<30, 1<<30 }, "memory"},
		{"zero timeout", func(p *Plan) { p.Timeout = 0 }, "Timeout"},
		{"too many sizes", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepBytes = 1, 1<<30, 1 }, "sizes"},
		{"too many sizes by a tiny factor", func(p *Plan) { p.MinBytes, p.MaxBytes, p.StepFactor = 1<<20, 1<<40, 1.0000001 }, "sizes"},
		{"too many iterations", func(p *Plan) { p.Iters = 1 << 30 }, "Iters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			tc.modify(&p)
			err := p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
