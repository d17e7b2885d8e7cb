package bench

import (
	"context"
	"fmt"
	"time"

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
