package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/montanaflynn/stats"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/runctl"
)

// measureRow times one row on this rank: warm-up iterations, a barrier, the
// timed iterations (each rank timing its own), then, outside the timed
// region, one checked call on fresh inputs. Rank 0 gathers every rank's
// iteration times and wrong-element counts and returns the combined record;
// other ranks return nil. When the overlap phase fails, rank 0 may still
// return the plain timing's record with the error (salvagePlain), for the
// caller to write. The record comes back by pointer, not as 470 bytes on
// this frame and the caller's: every rank of a simulated world runs below
// them, and the deeper a rank's frames the more of its stack grows.
func (r *rankRunner) measureRow(ctx context.Context, row Row) (*results.Record, error) {
	// The op runs in the row's group (or the world); the harness's own
	// barrier and gathering run on the world.
	comm := r.groups[row.Group]
	// The plan by pointer, not a copy of its kilobyte on the frame: a
	// simulated world has thousands of ranks' stacks, grown to what the
	// harness's frames take (16384 ranks: 820 MB peak, most of it
	// stacks).
	p, rank, n := &r.plan, comm.Rank(), comm.Size()
	// Iteration i runs on set i mod len(sets): one with a warm cache, with
	// a cold one enough that its data comes from memory (cold.go).
	sets, draws, err := r.bufferSets(row, rank, n)
	if err != nil {
		return nil, err
	}
	buckets := sets[0]
	next := 0
	pattern := payload.PatternFor(row, n)
	if !p.NoPayload { // without payload there is nothing to fill, nor memory
		for _, set := range sets {
			for _, args := range set {
				payload.FillInputs(args, pattern, rank)
			}
		}
	}

	algo := ""
	reruns := r.comm.Reruns()
	wd, release := r.watch(ctx)
	defer release()
	// A re-run (--retry) gets the whole time limit again. Re-runs of the
	// barrier and the gathering below may arm it too; the row's watchdog
	// guards nothing once its ops are over.
	r.rearm = wd.ArmNow
	defer func() { r.rearm = nil }()
	// --inject's faults act on the row's own calls, under the op's time
	// limit and its watchdog, and not on the harness's (gate.Suspend).
	// Corruption they inject is counted in, wherever the check looks.
	r.gate.Open(wd.Context(), p.Timeout)
	defer r.gate.Close()
	corrupted := r.gate.Corrupted()
	// An op is one collective, or with --fusion one per bucket, back to
	// back; a timed iteration is p.aggIters() ops (-m), each on the next
	// buffer set, with a barrier after each with -z 1. They are timed by
	// r.stamp (clock.go): the backend's virtual clock where it simulates
	// (sim), else the wall clock. The watchdog stays on the wall clock.
	call := func(ops int) (time.Duration, error) {
		start := r.stamp()
		for range ops {
			set := sets[next%len(sets)]
			next++
			for _, args := range set {
				wd.ArmNow()
				var err error
				if algo, err = comm.Run(wd.Context(), row.Algo, args); err != nil {
					wd.Disarm()
					return 0, err
				}
			}
			wd.Disarm()
			if p.Blocking == BlockingOpBarrier {
				if err := r.barrier(ctx); err != nil {
					return 0, fmt.Errorf("barrier after an op (-z 1): %w", err)
				}
			}
		}
		return r.since(start), nil
	}
	for range p.Warmup {
		if _, err := call(1); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	if err := r.barrier(ctx); err != nil {
		return nil, err
	}
	// samples holds this rank's iteration times in seconds, each per op,
	// then the sampleExtras values (extraWrong...): the vector rank 0
	// gathers. With --benchtime the count is the row's own (benchtime.go).
	samples, err := r.timedIterations(ctx, comm, call)
	if err != nil {
		return nil, err
	}
	iters := len(samples) - sampleExtras
	samples[iters+extraWrong] = -1
	// --overlap (overlap.go): the row again, each iteration overlapped
	// with synthetic compute; rank 0 gets the result.
	var overlap overlapResult
	if p.Overlap > 0 || p.OverlapAuto {
		o, err := r.measureOverlap(ctx, comm, wd, row.Algo, buckets, samples[:iters])
		if err != nil {
			err = fmt.Errorf("overlapped with compute: %w", err)
			return r.salvagePlain(ctx, row, algo, samples), err
		}
		overlap = o
	}
	unchecked := r.gate.Corrupted() - corrupted
	if runs := p.checkRuns(); runs > 0 {
		// A checked run runs on the set the rotation reaches next.
		nextSet := func() []*coll.Args { return sets[next%len(sets)] }
		wrong, err := r.checkRuns(ctx, checkRun{runs: runs, row: row, pattern: pattern, rank: rank, n: n}, nextSet, call)
		if err != nil {
			return nil, err
		}
		samples[iters+extraWrong] = float64(wrong)
		samples[iters+extraInCheck] = float64(r.gate.Corrupted() - corrupted - unchecked)
	}
	samples[iters+extraUnchecked] = float64(unchecked)
	all, err := r.gatherFloats(ctx, samples)
	if err != nil || r.comm.Rank() != 0 {
		return nil, err
	}
	return r.rowRecord(row, rowResult{all: all, iters: iters, draws: draws, algo: algo, reruns: reruns, overlap: overlap})
}

// watch returns the watchdog over a row's ops and what ends it when the
// row is over. In the sweep (r.sweeping) the rows of a rank share one,
// made at the first row, disarmed between rows, and made anew after a row
// whose op overran it (its context has ended), so that no row inherits an
// ended context: a watchdog per rank and row (a context made and
// cancelled, an entry in the watchdogs' shared set added and taken out)
// cost a 16384-rank simulated sweep half a CPU-second. The sweep stops the
// shared one (endWatch). Outside the sweep (the link probe, calibration)
// each row has its own.
func (r *rankRunner) watch(ctx context.Context) (*runctl.Watchdog, func()) {
	if !r.sweeping {
		wd := runctl.NewWatchdog(ctx, r.plan.Timeout)
		return wd, wd.Stop
	}
	if r.wd == nil || r.wd.Context().Err() != nil {
		r.endWatch()
		r.wd = runctl.NewWatchdog(ctx, r.plan.Timeout)
	}
	return r.wd, r.wd.Disarm
}

// endWatch stops the sweep's shared watchdog, if there is one.
func (r *rankRunner) endWatch() {
	if r.wd != nil {
		r.wd.Stop()
		r.wd = nil
	}
}

// rowResult is what measureRow hands rowRecord on rank 0: every rank's
// samples (all) of iters timed iterations each, the traffic's draws, the
// algorithm that ran, the transport's re-runs before the row, and the
// overlap phase's result.
type rowResult struct {
	all     []float64
	iters   int
	draws   []*draw
	algo    string
	reruns  int
	overlap overlapResult
}

// rowRecord combines rank 0's gathered result of row into its record.
func (r *rankRunner) rowRecord(row Row, res rowResult) (*results.Record, error) {
	all, iters, draws, overlap := res.all, res.iters, res.draws, res.overlap
	rec := combine(row, all, r.comm.Size(), iters, r.linkFor(row.Group), r.plan.Average)
	if r.plan.Stats {
		rec.RankIterUS = rankIterUS(all, r.comm.Size(), iters)
	}
	trafficRecord(&rec, row, draws)
	var err error
	if rec.Comment, err = r.plan.rankSummary(row, draws, rec); err != nil {
		return nil, fmt.Errorf("rank summary: %w", err)
	}
	rec.Algo = res.algo
	rec.Retries = r.comm.Reruns() - res.reruns
	overlap.fill(&rec)
	return &rec, nil
}

// checkRun is what the checked runs of a row need: how many, the row, its
// input pattern, and this rank's place in the row's group.
type checkRun struct {
	runs    int
	row     Row
	pattern dtype.Pattern
	rank, n int
}

// checkRuns makes c.runs checked runs of the row on this rank, outside
// the timed region: each on the buffer set nextSet names, its receive
// side poisoned and its inputs filled anew, with the pattern shifted by
// the run's index so that each run checks other values (payload.FillShifted),
// then one op (call). It returns the elements this rank found wrong in the
// first run where any rank found one, or 0: after each run but the last
// the ranks agree whether any found one, and stop there, as nccl-tests'
// check loop does.
func (r *rankRunner) checkRuns(ctx context.Context, c checkRun, nextSet func() []*coll.Args,
	call func(ops int) (time.Duration, error)) (int64, error) {
	for run := range c.runs {
		checked := nextSet()
		for _, args := range checked {
			payload.Poison(args.Recv)
			payload.FillShifted(args, c.pattern, c.rank, run)
		}
		if _, err := call(1); err != nil {
			if c.runs > 1 {
				return 0, fmt.Errorf("checked run %d of %d: %w", run+1, c.runs, err)
			}
			return 0, fmt.Errorf("checked run: %w", err)
		}
		var wrong int64
		for _, args := range checked {
			wrong += payload.CountWrongShifted(args, c.row, c.pattern, c.rank, c.n, run)
		}
		if run == c.runs-1 {
			return wrong, nil
		}
		most, err := r.ctl().AllReduceFloats(ctx, dtype.Max, []float64{float64(wrong)})
		if err != nil {
			return 0, fmt.Errorf("agreeing on checked run %d of %d: %w", run+1, c.runs, err)
		}
		if most[0] > 0 {
			return wrong, nil
		}
	}
	return 0, nil
}

// salvageTimeout bounds the gathering of a row's plain timing after its
// overlap phase failed: the run is ending, and a world that cannot gather
// within it has lost the row.
const salvageTimeout = time.Second

// salvagePlain gathers the plain timing of row (samples, without a
// checked result), measured before its overlap phase failed, so that rank
// 0 can write it: on a signal every rank stops where it is and the world
// still carries a gather. The gather runs on a context that the signal
// has not cancelled, for at most salvageTimeout; when it fails (a rank
// died, the transport is gone), the row is lost as before, and the
// caller's error says why. The overlap phase is measured before the
// plain timing is gathered, not after: on a simulated world, the gather
// leaves the ranks' clocks apart, which the overlapped times would carry.
// Rank 0 returns the record (Op set); others, and a failed gather, a zero
// one.
func (r *rankRunner) salvagePlain(ctx context.Context, row Row, algo string, samples []float64) *results.Record {
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), salvageTimeout)
	defer cancel()
	all, err := r.gatherFloats(gctx, samples)
	if err != nil || r.comm.Rank() != 0 {
		return nil
	}
	rec := combine(row, all, r.comm.Size(), len(samples)-sampleExtras, r.linkFor(row.Group), r.plan.Average)
	rec.Algo = algo
	return &rec
}

// linkFor returns the bandwidth of the link that bounds an op in domain
// kind ("" for the world), which util is computed against: the link
// between servers when some group of the domain spans servers and one was
// given, else linkBW.
func (r *rankRunner) linkFor(kind string) float64 {
	if r.plan.LinkInterGBps > 0 && r.plan.crossesServers(kind) {
		return r.plan.LinkInterGBps
	}
	return r.linkBW()
}

// linkBW returns the link bandwidth util is computed against, 0 if unknown.
func (r *rankRunner) linkBW() float64 {
	if r.plan.LinkSource == LinkAuto {
		return r.linkGBps
	}
	return r.plan.LinkGBps
}

// The values that follow the iteration times in a rank's samples, by
// their offset from the number of iterations.
const (
	extraWrong     = iota // elements the check found wrong; -1 when not checked
	extraWaited           // seconds spent waiting on peers in the timed iterations
	extraUnchecked        // messages --inject corrupted in calls the check does not see
	extraInCheck          // messages --inject corrupted in the checked call
	extraCPU              // this rank's share of the process's CPU seconds per op (-C); 0 without
	extraReceived         // seconds its variable-size calls took to their last receive (coll.Comm.Received), per op
	sampleExtras          // how many values follow the times
)

// combine turns every rank's samples (rank-major, iters times and the
// sampleExtras each) into the row's record. The row's statistics are of
// one series, picked by avg (Average.series): by default the slowest
// rank's iterations, the rank whose timed loop took longest (the op is
// done when the last rank is done), as nccl-tests' -a 3 takes each rank's
// mean over its loop and then the largest; time is the series' mean, and
// min, p50, p99, max and stddev are of the same series, so min <= time <=
// max. The CPU time per op (-C) is combined over the ranks by avg too.
// The straggler figures (slow, skew) are of per-rank busy time instead;
// for a variable-size collective, of each rank's time from the start of
// its calls to their last receive (coll.Comm.Received).
// With groups, every rank of the world counts (all groups run at once)
// and the bus factor is the group's.
func combine(row Row, all []float64, n, iters int, linkGBps float64, avg Average) results.Record {
	perRank := make([][]float64, n)
	busy := make([]float64, n)
	recv := make([]float64, n)
	cpu := make([]float64, n)
	var wrong, unchecked, inCheck int64
	for rk := range perRank {
		perRank[rk] = all[rk*(iters+sampleExtras) : rk*(iters+sampleExtras)+iters]
	}
	perIter := avg.series(perRank)
	for rk := range n {
		s := all[rk*(iters+sampleExtras) : (rk+1)*(iters+sampleExtras)]
		var total float64
		for _, d := range s[:iters] {
			total += d
		}
		cpu[rk] = s[iters+extraCPU]
		busy[rk] = max(total-s[iters+extraWaited], 0)
		recv[rk] = s[iters+extraReceived]
		if s[iters+extraWrong] < 0 {
			wrong = -1
		} else if wrong >= 0 {
			wrong += int64(s[iters+extraWrong])
		}
		unchecked += int64(s[iters+extraUnchecked])
		inCheck += int64(s[iters+extraInCheck])
	}
	// Corruption the tool injected is always reported: one wrong element
	// per corrupted message that the check did not see, in a call it did
	// not check or in the checked one when it found nothing wrong (a max
	// or min hides a flipped bit of a value that does not win).
	injected := unchecked
	if wrong == 0 {
		injected += inCheck
	}
	if injected > 0 {
		wrong = max(wrong, 0) + injected
	}
	mean, _ := stats.Mean(perIter)
	lo, _ := stats.Min(perIter)
	hi, _ := stats.Max(perIter)
	mean = min(max(mean, lo), hi) // a rounded sum must not step outside
	us := func(f func(stats.Float64Data) (float64, error)) float64 {
		v, _ := f(perIter)
		return v * 1e6
	}
	rec := results.Record{
		Op: row.Op.String(), DType: row.DType.String(), RedOp: redOpName(row.RedOp), Root: row.Root,
		InPlace: row.Place == InPlace, Bytes: row.Bytes, Count: int64(row.Count) * int64(row.Op.Blocks(max(row.GroupSize, 1))) * int64(max(row.Buckets, 1)),
		Iters: iters, TimeUS: mean * 1e6,
		MinUS:    us(stats.Min),
		P50US:    us(func(d stats.Float64Data) (float64, error) { return stats.Percentile(d, 50) }),
		P99US:    us(func(d stats.Float64Data) (float64, error) { return stats.Percentile(d, 99) }),
		MaxUS:    us(stats.Max),
		StdDevUS: us(stats.StandardDeviation),
		Wrong:    wrong, Injected: injected, Util: math.NaN(),
		Group: row.Group, GroupSize: row.GroupSize, Buckets: row.Buckets,
	}
	rec.CPUUS = avg.of(cpu) * 1e6
	if row.Op.Desc().Variable() {
		// The rank whose receives completed last, the one the skew of
		// the counts made everyone wait for: its busy time names no one,
		// as senders wait until the hot receiver has taken their blocks
		// and, on shm, that receiver copies them inside its waits. With
		// even counts the ranks receive alike: the skew is near 1, and
		// slow is the last of equals.
		rec.SlowRank, rec.Skew = straggler(recv, mean*float64(iters))
	} else {
		rec.SlowRank, rec.Skew = straggler(busy, mean*float64(iters))
	}
	if mean > 0 {
		rec.AlgBW = float64(row.Bytes) / mean / 1e9
		rec.BusBW = rec.AlgBW * row.Op.BusFactor(max(row.GroupSize, 1))
	}
	if linkGBps > 0 {
		rec.Util = rec.BusBW / linkGBps
	}
	return rec
}

// straggler names the rank with the most busy time (time in the op not
// spent waiting on a peer: the rank the others waited for; for a
// variable-size collective, time to its last receive) and the ratio of
// its busy time to the least busy rank's. Busy times below a microsecond
// count as one, so that idle ranks do not make the ratio meaningless. The
// skew is 0 (not known) when that rank was busy less than
// results.SkewReadable of total, the row's time over its iterations: the
// ranks spent the op in their waits (on shm a receiver copies inside its
// wait), and the ratio of what is left is noise. No rank is named (-1)
// when no rank's time was measured: a call handed whole to a library's
// own collective (--algo native) has no waits of ours to tell busy time
// from.
func straggler(busy []float64, total float64) (rank int, skew float64) {
	if len(busy) < 2 {
		return 0, 1
	}
	least := math.Inf(1)
	for r, b := range busy {
		if b > busy[rank] {
			rank = r
		}
		least = min(least, b)
	}
	if busy[rank] <= 0 {
		return -1, 0
	}
	if busy[rank] < results.SkewReadable*total {
		return rank, 0
	}
	return rank, max(busy[rank], 1e-6) / max(least, 1e-6)
}

// ctl is the rank's control channel (runctl.Ctl): the world's Comm, each call
// under the op timeout, quiet (no fault, and payload on); in memory where
// the world's ranks all run in this process and meet there (sim).
func (r *rankRunner) ctl() runctl.Ctl {
	// Made once per rank, not per call: the method value r.quiet and
	// the look-up of the rendezvous cost an allocation and a walk of the
	// wrapped transports, several times a row on thousands of ranks.
	if r.control.Comm != r.comm {
		r.control = runctl.Ctl{Comm: r.comm, Timeout: r.plan.Timeout, Quiet: r.quiet, Shared: runctl.SharedOf(r.comm)}
	}
	return r.control
}

// barrier synchronises the ranks under the op timeout; in virtual time it
// also aligns their clocks (syncClocks).
func (r *rankRunner) barrier(ctx context.Context) error { return r.syncClocks(ctx) }

// gatherFloats gathers every rank's vector (all of the same length) at rank
// 0, rank-major, with the harness's own gather collective.
func (r *rankRunner) gatherFloats(ctx context.Context, v []float64) ([]float64, error) {
	all, err := r.ctl().GatherFloats(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("collecting timings: %w", err)
	}
	return all, nil
}

// rankIterUS is every rank's iteration times from the samples combine
// reads (rank-major, iters times and the sampleExtras each), in
// microseconds.
func rankIterUS(all []float64, n, iters int) [][]float64 {
	out := make([][]float64, n)
	for rk := range out {
		s := all[rk*(iters+sampleExtras) : rk*(iters+sampleExtras)+iters]
		out[rk] = make([]float64, iters)
		for i, d := range s {
			out[rk][i] = d * 1e6
		}
	}
	return out
}
