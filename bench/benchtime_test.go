package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
)

func TestBenchCount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		done        int
		work, want  float64
		round, next int
	}{
		{"enough work", 20, 0.5, 0.3, 0, 20},
		{"exactly enough", 20, 0.3, 0.3, 0, 20},
		{"fills with a fifth to spare", 20, 0.01, 0.3, 0, 720},
		{"grows at most a hundredfold", 20, 1e-6, 0.3, 0, 2000},
		{"no time measured", 20, 0, 0.3, 0, 2000},
		{"at least one more", 1, 0.2999, 0.3, 0, 2},
		{"capped", 500_000, 0.1, 0.3, 0, maxIters},
		{"at the cap", maxIters, 0.1, 0.3, 0, maxIters},
		{"last round", 20, 0.01, 0.3, maxBenchRounds - 1, 20},
	} {
		if got := benchCount(tc.done, tc.work, tc.want, tc.round); got != tc.next {
			t.Errorf("%s: benchCount(%d, %v, %v, %d) = %d, want %d", tc.name, tc.done, tc.work, tc.want, tc.round, got, tc.next)
		}
	}
}

func TestBenchTimeValidate(t *testing.T) {
	for _, tc := range []struct {
		backend string
		d       time.Duration
		bad     bool
	}{
		{"shm", 0, false},
		{"shm", 300 * time.Millisecond, false},
		{"shm", MaxBenchTime, false},
		{"shm", MaxBenchTime + 1, true},
		{"shm", -time.Second, true},
		{"sim", 0, false},
		{"sim", time.Second, true},
	} {
		p := DefaultPlan()
		p.Backend, p.Ranks, p.BenchTime = tc.backend, 2, tc.d
		p.LinkGBps, p.LinkSource = 10, "given"
		err := p.Validate()
		var fe *fielderr.FieldError
		if tc.bad != (err != nil) || (tc.bad && (!errors.As(err, &fe) || fe.Field != "BenchTime")) {
			t.Errorf("%s --benchtime %v: Validate() = %v, want bad %v naming BenchTime", tc.backend, tc.d, err, tc.bad)
		}
	}
}

// TestBenchTimeMemory checks that the estimate counts the samples of the
// most iterations a row may run.
func TestBenchTimeMemory(t *testing.T) {
	p := DefaultPlan()
	p.Backend, p.Ranks = "shm", 8
	samples := func(p Plan) int64 {
		var b int64
		for _, part := range p.Memory().Parts {
			if part.Flag == "iters" || part.Flag == "benchtime" {
				b += part.Bytes
			}
		}
		return b
	}
	plain := samples(p)
	p.BenchTime = time.Second
	timed := samples(p)
	if min := int64(8 * maxIters * p.Ranks); timed < min || plain >= timed {
		t.Errorf("samples counted: %d B with -n %d, %d B with --benchtime, want at least %d B", plain, p.Iters, timed, min)
	}
}

// TestRunBenchTime runs rows with --benchtime on shm: each runs many more
// iterations than -n, at least the time asked for (the mean of the
// slowest rank's series times the count), and every rank ran the count
// (the gather of equal vectors and the check would fail otherwise).
func TestRunBenchTime(t *testing.T) {
	p := smallPlan()
	p.Ops, p.DTypes, p.RedOps = []coll.Op{coll.AllReduce, coll.Gather}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
	p.MinBytes, p.MaxBytes, p.Root = 1024, 1024, 0
	p.Placements = []Placement{OutOfPlace}
	p.Iters, p.BenchTime = 2, 50*time.Millisecond
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if c.header.BenchTime != p.BenchTime {
		t.Errorf("header's BenchTime %v, want %v", c.header.BenchTime, p.BenchTime)
	}
	for _, r := range c.records {
		work := time.Duration(r.TimeUS * float64(r.Iters) * float64(time.Microsecond))
		if r.Iters <= 10*p.Iters || work < p.BenchTime*99/100 || r.Wrong != 0 {
			t.Errorf("%s: %d iterations of %.2f us (%v of work), %d wrong; want more than %d iterations, at least %v",
				r.Op, r.Iters, r.TimeUS, work, r.Wrong, 10*p.Iters, p.BenchTime)
		}
	}
}

// TestProbeMinTime checks that a probe of next to nothing (the
// calibration's alpha) runs at least probeMinTime of timed work, not only
// its count.
func TestProbeMinTime(t *testing.T) {
	var rec results.Record
	onProbeRanks(t, nil, func(ctx context.Context, r *rankRunner, bp *payload.BufferPool) error {
		got, err := r.probeRow(ctx, bp, probeRowOf8, "rd", 1, 3)
		if r.comm.Rank() == 0 {
			rec = got
		}
		return err
	})
	work := time.Duration(rec.TimeUS * float64(rec.Iters) * float64(time.Microsecond))
	// The promise is the work: on a loaded host the 3 estimating
	// iterations alone may fill it, so no more is asked of the count.
	if rec.Iters < 3 || work < probeMinTime*99/100 {
		t.Errorf("probe of 8 bytes: %d iterations, %v of work; want 3 or more, at least %v", rec.Iters, work, probeMinTime)
	}
}

// probeRowOf8 is the smallest row a calibration probes: 8 bytes.
var probeRowOf8 = Row{Op: coll.AllReduce, DType: dtype.Uint8, RedOp: dtype.Sum, Root: -1, Place: OutOfPlace, Count: 8, Bytes: 8}

// onProbeRanks runs f on each rank of a 2-rank shm world, with a rank
// runner whose communicator is over the rank's transport (wrapped by wrap
// unless it is nil) and a pool of 64-byte buffers, and fails t if any rank
// fails.
func onProbeRanks(t *testing.T, wrap func(backends.Transport) backends.Transport,
	f func(ctx context.Context, r *rankRunner, bp *payload.BufferPool) error) {
	t.Helper()
	p := smallPlan()
	p.Backend, p.Ranks = "shm", 2
	b, err := p.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	err = b.Run(context.Background(), p.config(), func(ctx context.Context, tr backends.Transport) error {
		if wrap != nil {
			tr = wrap(tr)
		}
		r := &rankRunner{plan: p, comm: coll.NewComm(tr), bufs: &payload.BufferPool{}}
		if err := r.makeGroups(); err != nil {
			return err
		}
		var bp payload.BufferPool
		defer bp.Free()
		if err := bp.Alloc(64); err != nil {
			return err
		}
		return f(ctx, r, &bp)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stallingTransport holds every stallEvery-th send of its rank for stall
// before posting it: a descheduled iteration now and then, as on a loaded
// host. It hides the wrapped transport's call tags, so every rank of a
// world must wear one.
type stallingTransport struct {
	backends.Transport
	sends int
}

const (
	stallEvery = 40
	stall      = 50 * time.Millisecond
)

func (s *stallingTransport) Send(peer int, buf []byte) backends.Request {
	s.sends++
	if s.sends%stallEvery == 0 {
		time.Sleep(stall)
	}
	return s.Transport.Send(peer, buf)
}

// TestTimeProbeTakesMedian: a calibration probe's time is its median
// iteration, which iterations stalled now and then leave alone, not its
// mean, which they inflate many times over (and with it alpha, which made
// auto prefer fewer, larger steps).
func TestTimeProbeTakesMedian(t *testing.T) {
	var got float64
	stalling := func(tr backends.Transport) backends.Transport { return &stallingTransport{Transport: tr} }
	onProbeRanks(t, stalling, func(ctx context.Context, r *rankRunner, bp *payload.BufferPool) error {
		secs, err := r.timeProbe(ctx, bp, probeRowOf8, "rd", 1, 3*stallEvery)
		if err != nil {
			return err
		}
		if r.comm.Rank() == 0 {
			got = secs
		}
		return nil
	})
	// A stall every 40 sends adds at least 1.25 ms to the mean iteration.
	if perIter := stall.Seconds() / stallEvery; got > perIter/2 {
		t.Errorf("probe time %v s with a %v stall every %d sends: want the median, well under the mean's %v s",
			got, stall, stallEvery, perIter/2)
	}
}
