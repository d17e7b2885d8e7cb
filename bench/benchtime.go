package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/runctl"
)

// --benchtime, as go test's -benchtime: a row runs at least Sweep.Iters
// timed iterations and at least Sweep.BenchTime of timed work, the slowest
// rank counting. The first Iters iterations are the estimate: when they
// took less than BenchTime, rank 0 predicts the count that fills it (with
// a fifth to spare, growing at most a hundredfold a round, as go test
// does), broadcasts it, and every rank runs the iterations that are
// missing, until the work reaches BenchTime, the count reaches
// maxIters or maxBenchRounds rounds have run. Every rank runs the same
// count, which the row's record reports (Record.Iters).

// MaxBenchTime bounds --benchtime: longer per row is a typo.
const MaxBenchTime = time.Hour

// maxBenchRounds bounds the rounds of prediction of one row.
const maxBenchRounds = 10

// validateBenchTime checks Sweep.BenchTime: within [0, MaxBenchTime], and
// not on a simulated backend, whose virtual time has no noise that more
// iterations would average out.
func (p *Plan) validateBenchTime() error {
	switch {
	case p.BenchTime < 0:
		return fielderr.FieldErrorf("BenchTime", " %v: must not be negative", p.BenchTime)
	case p.BenchTime > MaxBenchTime:
		return fielderr.FieldErrorf("BenchTime", " %v: at most %v of timed work per row", p.BenchTime, MaxBenchTime)
	case p.BenchTime > 0 && p.Caps().Simulated:
		return fielderr.FieldErrorf("BenchTime", " %v: the %s backend's virtual time does not vary from one iteration to the next; use %s for a count",
			p.BenchTime, p.Backend, fielderr.Field("Iters"))
	}
	return nil
}

// maxRowIters is the most timed iterations one row may run: Iters, or
// with --benchtime the cap of its prediction.
func (p *Plan) maxRowIters() int {
	if p.BenchTime > 0 {
		return maxIters
	}
	return p.Iters
}

// timedIterations runs the row's timed iterations on this rank, each
// call(ops) with ops p.aggIters() (-m), and returns their times in
// seconds per op, followed by room for the sampleExtras values, with the
// time this rank waited on its peers (in comm) during them already at
// extraWaited, the time its variable-size calls took to their last
// receive at extraReceived and, with -C, its share of the process's CPU
// time per op at extraCPU. With -z 3 a barrier precedes each iteration, outside its time
// and its CPU time.
func (r *rankRunner) timedIterations(ctx context.Context, comm *coll.Comm, call func(ops int) (time.Duration, error)) ([]float64, error) {
	p := &r.plan
	ops := p.aggIters()
	samples := make([]float64, 0, p.Iters+sampleExtras)
	var waited, received, work, cpu time.Duration
	n := p.Iters
	for round := 0; ; round++ {
		// Room for the round's times before it starts: growing the slice
		// inside the round copies it, and with --benchtime's millions of
		// small iterations faults in fresh pages and wakes the garbage
		// collector between timed calls.
		samples = slices.Grow(samples, n+sampleExtras-len(samples))
		// The waits and the CPU time are of the iterations alone, as
		// their times are: read around each one with -z 3, whose barrier
		// waits too, else around the round (a reading is two of a clock,
		// which the peers' loops do not pay: an iteration's, as a send's
		// hand-off to the peer, ends up in the peer's time).
		roundWaited, roundReceived := r.waited(comm), comm.Received()
		for len(samples) < n {
			if p.Blocking == BlockingIterBarrier {
				if err := r.barrier(ctx); err != nil {
					return nil, fmt.Errorf("barrier before an iteration (-z 3): %w", err)
				}
				roundWaited, roundReceived = r.waited(comm), comm.Received()
			}
			var used time.Duration
			if p.CPUTime {
				used = runctl.ProcessCPU()
			}
			d, err := call(ops)
			if err != nil {
				return nil, err
			}
			if p.CPUTime {
				cpu += runctl.ProcessCPU() - used
			}
			if p.Blocking == BlockingIterBarrier {
				waited += r.waited(comm) - roundWaited
				received += comm.Received() - roundReceived
			}
			samples = append(samples, d.Seconds()/float64(ops))
			work += d
		}
		if p.Blocking != BlockingIterBarrier {
			waited += r.waited(comm) - roundWaited
			received += comm.Received() - roundReceived
		}
		if p.BenchTime <= 0 {
			break
		}
		next, err := r.agreeCount(ctx, n, work, round)
		if err != nil {
			return nil, fmt.Errorf("choosing the iterations of --benchtime: %w", err)
		}
		if next <= n {
			break
		}
		n = next
	}
	samples = append(samples, make([]float64, sampleExtras)...)
	// Per op, as the times are (-m).
	samples[n+extraWaited] = waited.Seconds() / float64(ops)
	samples[n+extraReceived] = received.Seconds() / float64(ops)
	if p.CPUTime {
		// The process's CPU time is that of every rank it hosts (shm's
		// goroutines), which each read over the same stretch: each takes
		// its share.
		samples[n+extraCPU] = cpu.Seconds() / float64(n*ops) / float64(computeRanks(p))
	}
	return samples, nil
}

// agreeCount returns how many iterations the row runs in all after done
// of them took work on this rank: the slowest rank's work counts, rank 0
// decides, and every rank gets its decision.
func (r *rankRunner) agreeCount(ctx context.Context, done int, work time.Duration, round int) (int, error) {
	ctl := r.ctl()
	slowest, err := ctl.AllReduceFloats(ctx, dtype.Max, []float64{work.Seconds()})
	if err != nil {
		return 0, err
	}
	var next float64
	if r.comm.Rank() == 0 {
		next = float64(benchCount(done, slowest[0], r.plan.BenchTime.Seconds(), round))
	}
	got, err := ctl.BroadcastFloats(ctx, []float64{next})
	if err != nil {
		return 0, err
	}
	return int(got[0]), nil
}

// benchCount predicts the iterations in all that fill want seconds of
// work after done iterations took work seconds: done itself when the work
// is enough, the count is at maxIters or round is the last.
func benchCount(done int, work, want float64, round int) int {
	if work >= want || done >= maxIters || round+1 >= maxBenchRounds {
		return done
	}
	grow := 100.0
	if work > 0 {
		grow = min(grow, want/work*1.2)
	}
	n := math.Ceil(float64(done) * grow)
	return int(min(max(n, float64(done)+1), maxIters))
}

// addSamples adds the memory of one row's iteration times to e (add
// counts a part per hosted rank): each rank's times and their encoding
// for the gather, and rank 0's gathered times of every rank, encoded and
// decoded. With --benchtime a row may run up to maxIters iterations, which
// is what is counted.
func (p *Plan) addSamples(e *MemoryEstimate, add func(name, flag string, perRank int64)) {
	flag := "iters"
	if p.BenchTime > 0 {
		flag = "benchtime"
	}
	one := 8 * int64(p.maxRowIters()+sampleExtras)
	add("timing samples", flag, 2*one)
	e.Parts = append(e.Parts, MemPart{Name: "gathered timings (rank 0)", Flag: flag,
		Bytes: limits.SatMul(2*one, int64(p.Ranks))})
}
