package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/payload"
)

// TestParseAverage: -a's numbers name nccl-tests' combinations, and back.
func TestParseAverage(t *testing.T) {
	for n, want := range []Average{AverageRank0, AverageMean, AverageMin, AverageMax} {
		got, err := ParseAverage(n)
		if err != nil || got != want || got.Flag() != n {
			t.Errorf("-a %d: %v (flag %d), %v; want %v", n, got, got.Flag(), err, want)
		}
	}
	for _, n := range []int{-1, 4, 1 << 40} {
		if _, err := ParseAverage(n); err == nil {
			t.Errorf("-a %d accepted", n)
		}
	}
}

// TestCombineAverage combines the same per-rank samples under every -a
// and checks the row's time, its fastest iteration and the CPU time
// against figures worked out by hand (-a 3 the series of rank 2, whose
// loop took longest; -a 2 of rank 1's; -a 1 each iteration's mean), and
// that min <= rank 0, mean <= max.
func TestCombineAverage(t *testing.T) {
	row := Row{Op: coll.AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Root: -1, Bytes: 4096, Count: 1024, GroupSize: 3}
	ranks := [][]float64{{10, 1, 4}, {2, 6, 4}, {3, 3, 10}} // µs per iteration
	cpus := []float64{1, 3, 2}                              // µs per op
	var all []float64
	for rk, times := range ranks {
		for _, us := range times {
			all = append(all, us*1e-6)
		}
		extras := make([]float64, sampleExtras)
		extras[extraCPU] = cpus[rk] * 1e-6
		all = append(all, extras...)
	}
	tests := []struct {
		avg           Average
		time, lo, cpu float64 // mean and fastest iteration, CPU time
	}{
		{AverageMax, 16.0 / 3, 3, 3},
		{AverageMin, 4, 2, 1},
		{AverageRank0, 5, 1, 1},
		{AverageMean, (5 + 10.0/3 + 6) / 3, 10.0 / 3, 2},
	}
	got := map[Average]float64{}
	for _, tc := range tests {
		rec := combine(row, all, 3, 3, 0, tc.avg)
		got[tc.avg] = rec.TimeUS
		if math.Abs(rec.TimeUS-tc.time) > 1e-9 || math.Abs(rec.MinUS-tc.lo) > 1e-9 || math.Abs(rec.CPUUS-tc.cpu) > 1e-9 {
			t.Errorf("-a %d: time %v min %v cpu %v, want %v %v %v", tc.avg.Flag(), rec.TimeUS, rec.MinUS, rec.CPUUS, tc.time, tc.lo, tc.cpu)
		}
		checkOneSeries(t, rec, 3)
	}
	for _, a := range []Average{AverageRank0, AverageMean, AverageMax} {
		if got[AverageMin] > got[a] {
			t.Errorf("-a 2 time %v above -a %d's %v", got[AverageMin], a.Flag(), got[a])
		}
	}
	if got[AverageMax] < got[AverageMean] || got[AverageMax] < got[AverageRank0] {
		t.Errorf("-a 3 time %v below another: %v", got[AverageMax], got)
	}
}

// TestAverageSim runs one plan on the sim backend, whose virtual time
// repeats exactly, under -a 2 and -a 3: the same iterations, and every
// row's time under -a 2 no larger than under -a 3; the header says which.
func TestAverageSim(t *testing.T) {
	run := func(avg Average) *capture {
		p := DefaultPlan()
		p.Backend, p.Ranks, p.Algo = "sim", 5, "ring"
		p.Ops = []coll.Op{coll.AllReduce, coll.Broadcast}
		p.MinBytes, p.MaxBytes, p.StepFactor = 1024, 1<<20, 32
		p.Iters, p.Warmup, p.LinkGBps, p.LinkSource = 4, 1, 10, "given"
		p.Average = avg
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	lo, hi := run(AverageMin), run(AverageMax)
	if lo.header.Average != "min" || hi.header.Average != "max" || !strings.Contains(lo.header.Method, "(-a 2)") {
		t.Errorf("headers say %q (%s) and %q", lo.header.Average, lo.header.Method, hi.header.Average)
	}
	less := 0
	for i, r := range lo.records {
		h := hi.records[i]
		if r.TimeUS > h.TimeUS {
			t.Errorf("%s %d B: -a 2 time %v above -a 3's %v", r.Op, r.Bytes, r.TimeUS, h.TimeUS)
		}
		if r.TimeUS < h.TimeUS {
			less++
		}
	}
	if less == 0 {
		t.Errorf("no row's fastest rank was faster than its slowest: -a changed nothing")
	}
}

// countingBackend is shm whose transports count the calls that begin on
// each rank, by op code, data type and count (coll.Comm's BeginCall).
type countingBackend struct{}

// countingCalls holds what countingBackend counted, per rank.
var countingCalls struct {
	sync.Mutex // guards m
	m          map[int]map[backends.Call]int
}

func (countingBackend) Name() string                { return "count-calls" }
func (countingBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (countingBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	return shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, countingTransport{t})
	})
}

// countingTransport counts the calls of countingBackend.
type countingTransport struct{ backends.Transport }

func (c countingTransport) Unwrap() backends.Transport { return c.Transport }
func (c countingTransport) BeginCall(call backends.Call) {
	countingCalls.Lock()
	key := backends.Call{Op: call.Op, DType: call.DType, Count: call.Count}
	countingCalls.m[c.Rank()][key]++
	countingCalls.Unlock()
	if tg, ok := c.Transport.(backends.CallTagger); ok {
		tg.BeginCall(call)
	}
}

var registerCounting sync.Once

// countCalls runs p on the counting backend and returns rank 0's count of
// the row's own calls (an fp32 allreduce of 1024 elements) and of
// barriers.
func countCalls(t *testing.T, edit func(p *Plan)) (ops, barriers int) {
	t.Helper()
	registerCounting.Do(func() { backends.Register(countingBackend{}) })
	p := DefaultPlan()
	p.Backend, p.Ranks, p.Algo = "count-calls", 3, "ring"
	p.MinBytes, p.MaxBytes = 4096, 4096
	p.Iters, p.Warmup, p.LinkGBps, p.LinkSource = 3, 1, 10, "given"
	edit(&p)
	countingCalls.Lock()
	countingCalls.m = map[int]map[backends.Call]int{}
	for r := range p.Ranks {
		countingCalls.m[r] = map[backends.Call]int{}
	}
	countingCalls.Unlock()
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.records {
		if (r.Wrong != 0) != (len(p.Inject) > 0) && p.Check {
			t.Errorf("%+v: %d wrong", p.Method, r.Wrong)
		}
	}
	countingCalls.Lock()
	defer countingCalls.Unlock()
	m := countingCalls.m[0]
	return m[backends.Call{Op: uint8(coll.AllReduce), DType: uint8(dtype.FP32), Count: 1024}], m[backends.Call{Op: 0x7f}]
}

// TestAggItersIssuesOps: -m 4 issues four ops in each timed iteration;
// the warm-up and the checked run issue one each.
func TestAggItersIssuesOps(t *testing.T) {
	for _, tc := range []struct{ m, want int }{{0, 1 + 3 + 1}, {1, 1 + 3 + 1}, {4, 1 + 3*4 + 1}, {7, 1 + 3*7 + 1}} {
		ops, _ := countCalls(t, func(p *Plan) { p.AggIters = tc.m })
		if ops != tc.want {
			t.Errorf("-m %d: %d calls of the row, want %d", tc.m, ops, tc.want)
		}
	}
}

// TestBlockingBarriers: -z 1 joins a barrier after every op (warm-up,
// timed and checked), -z 3 one before each timed iteration, -z 0 and 2
// none; with -m 2 the ops of -z 1 double.
func TestBlockingBarriers(t *testing.T) {
	_, base := countCalls(t, func(*Plan) {})
	for _, tc := range []struct {
		z     Blocking
		m     int
		extra int
	}{
		{BlockingNone, 1, 0},
		{BlockingWait, 1, 0},
		{BlockingOpBarrier, 1, 1 + 3 + 1},
		{BlockingOpBarrier, 2, 1 + 3*2 + 1},
		{BlockingIterBarrier, 1, 3},
		{BlockingIterBarrier, 2, 3},
	} {
		ops, got := countCalls(t, func(p *Plan) { p.Blocking, p.AggIters = tc.z, tc.m })
		if got-base != tc.extra || ops != 1+3*tc.m+1 {
			t.Errorf("-z %d -m %d: %d barriers more than -z 0 and %d ops, want %d and %d", tc.z, tc.m, got-base, ops, tc.extra, 1+3*tc.m+1)
		}
	}
}

// TestCheckIters: -c N makes N checked runs when every one is right; -c
// 0 none.
func TestCheckIters(t *testing.T) {
	for _, tc := range []struct {
		check bool
		n     int
		want  int
	}{{false, 0, 1 + 3}, {true, 0, 1 + 3 + 1}, {true, 1, 1 + 3 + 1}, {true, 5, 1 + 3 + 5}} {
		ops, _ := countCalls(t, func(p *Plan) { p.Check, p.CheckIters = tc.check, tc.n })
		if ops != tc.want {
			t.Errorf("check %v -c %d: %d calls, want %d", tc.check, tc.n, ops, tc.want)
		}
	}
}

// TestCheckItersStopAtFirstWrong: with every message corrupted, the
// checked runs of -c 4 stop after the first, which found wrong elements.
func TestCheckItersStopAtFirstWrong(t *testing.T) {
	inj, err := inject.Parse("corrupt=p:1")
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := countCalls(t, func(p *Plan) {
		p.CheckIters, p.Inject, p.InjectText = 4, inj, "corrupt=p:1"
	})
	if want := 1 + 3 + 1; ops != want {
		t.Errorf("%d calls, want %d: the checks went on after a wrong one", ops, want)
	}
}

// TestUnalignOffsetsBuffers: with -u 3 every buffer of a row starts 3
// elements of its data type past the pool's base, the pool has room for
// the largest, and the estimate counts it.
func TestUnalignOffsetsBuffers(t *testing.T) {
	p := DefaultPlan()
	p.Ranks, p.DTypes = 4, []dtype.DType{dtype.FP16, dtype.FP64}
	p.MinBytes, p.MaxBytes = 4096, 4096
	q := p
	q.Unalign = 3
	if got, want := q.bufferNeed(4)-p.bufferNeed(4), int64(3*8); got != want {
		t.Errorf("pool grew by %d bytes, want %d", got, want)
	}
	if q.MemoryNeeded() <= p.MemoryNeeded() {
		t.Errorf("estimate %d not above %d without -u", q.MemoryNeeded(), p.MemoryNeeded())
	}
	r := &rankRunner{plan: q, bufs: &payload.BufferPool{}}
	r.bufs.A, r.bufs.B = make([]byte, q.bufferNeed(4)), make([]byte, q.bufferNeed(4))
	for _, place := range []Placement{OutOfPlace, InPlace} {
		row := Row{Op: coll.AllReduce, DType: dtype.FP16, RedOp: dtype.Sum, Root: -1, Place: place, Count: 2048, Bytes: 4096}
		sets, _, err := r.bufferSets(row, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		a := sets[0][0]
		if off := uintptr(unsafe.Pointer(&a.Send[0])) - uintptr(unsafe.Pointer(&r.bufs.A[0])); off != 6 {
			t.Errorf("%v: send starts %d bytes past the base, want 6", place, off)
		}
	}
}

// TestUnalignChecked runs every collective with -u 3 and -u 1 in both
// placements: every result is still right.
func TestUnalignChecked(t *testing.T) {
	for _, u := range []int{1, 3} {
		p := smallPlan()
		p.Unalign = u
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.records) != len(p.Rows()) || c.header.Unalign != u {
			t.Fatalf("-u %d: %d rows of %d, header %d", u, len(c.records), len(p.Rows()), c.header.Unalign)
		}
		for _, r := range c.records {
			if r.Wrong != 0 {
				t.Errorf("-u %d: %s %s %d B: %d wrong", u, r.Op, r.DType, r.Bytes, r.Wrong)
			}
		}
	}
}

// TestCPUTime: -C gives every row a CPU time per op, and without it none.
func TestCPUTime(t *testing.T) {
	for _, on := range []bool{false, true} {
		p := smallPlan()
		p.Ops, p.CPUTime = []coll.Op{coll.AllReduce}, on
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		for _, r := range c.records {
			if (r.CPUUS > 0) != on || math.IsNaN(r.CPUUS) {
				t.Errorf("-C %v: %d B cputime %v", on, r.Bytes, r.CPUUS)
			}
		}
	}
}

// TestMethodValidate: hostile settings are refused naming their field.
func TestMethodValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(p *Plan)
		field fielderr.Field
	}{
		{"average", func(p *Plan) { p.Average = 9 }, "Average"},
		{"agg negative", func(p *Plan) { p.AggIters = -1 }, "AggIters"},
		{"agg huge", func(p *Plan) { p.AggIters = MaxAggIters + 1 }, "AggIters"},
		{"blocking", func(p *Plan) { p.Blocking = 4 }, "Blocking"},
		{"blocking negative", func(p *Plan) { p.Blocking = -1 }, "Blocking"},
		{"checks huge", func(p *Plan) { p.CheckIters = MaxCheckIters + 1 }, "CheckIters"},
		{"unalign negative", func(p *Plan) { p.Unalign = -1 }, "Unalign"},
		{"unalign huge", func(p *Plan) { p.Unalign = MaxUnalign + 1 }, "Unalign"},
		{"cputime on sim", func(p *Plan) { p.Backend, p.CPUTime = "sim", true }, "CPUTime"},
	} {
		p := DefaultPlan()
		p.MinBytes, p.MaxBytes = 1024, 1024
		tc.edit(&p)
		err := p.Validate()
		var fe *fielderr.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
}

// TestBlockingSim measures a small broadcast on the sim backend, whose
// virtual time repeats exactly: back to back (-z 0) the root issues its
// next op before the others have received the last, and an iteration's
// time is the mean of the ops' overlapping stretches; a barrier after
// each op (-z 1, timed) or before each iteration (-z 3) makes every op
// start with every rank, so each takes its whole latency.
func TestBlockingSim(t *testing.T) {
	times := map[Blocking]float64{}
	for _, z := range []Blocking{BlockingNone, BlockingOpBarrier, BlockingWait, BlockingIterBarrier} {
		p := DefaultPlan()
		p.Backend, p.Ranks, p.Algo = "sim", 8, "ring"
		p.Ops, p.MinBytes, p.MaxBytes = []coll.Op{coll.Broadcast}, 1024, 1024
		p.Iters, p.Warmup, p.LinkGBps, p.LinkSource = 5, 1, 10, "given"
		p.AggIters, p.Blocking = 2, z
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		times[z] = c.records[0].TimeUS
	}
	if !(times[BlockingOpBarrier] > times[BlockingNone]) || !(times[BlockingIterBarrier] > times[BlockingNone]) ||
		times[BlockingWait] != times[BlockingNone] {
		t.Errorf("times by -z: %v; want 1 and 3 above 0, and 2 the same as 0", times)
	}
}
