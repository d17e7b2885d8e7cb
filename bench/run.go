package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/group"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// Run executes plan p: it starts the ranks on the plan's backend, measures
// the link if asked, and writes the header, every row as it is measured, and
// the footer to sink (from rank 0). It returns the summary and the error
// that ended the run early, if any; rows measured before an error are kept.
func Run(ctx context.Context, p Plan, sink results.Sink) (results.Summary, error) {
	if err := p.Validate(); err != nil {
		return results.Summary{}, err
	}
	if p.NoPayload {
		p.Check = false // there are no results to check
	}
	b, err := p.Resolve()
	if err != nil {
		return results.Summary{}, err
	}
	rows := p.Rows()
	var sum results.Summary
	begun := false
	// Buffers are freed only once every rank has returned and the
	// transport has ended: until then a peer may still be reading one, and
	// a transport filling a receive that failed on its context.
	var later untilEnd
	defer later.free()
	share := &worldShare{}
	runErr := b.Run(ctx, p.config(), func(ctx context.Context, t backends.Transport) error {
		if err := agreePlan(ctx, &p, t); err != nil {
			return err
		}
		ft, gate := inject.WrapGated(t, p.Inject, p.Seed)
		r := &rankRunner{plan: p, comm: coll.NewComm(ft), bufs: &payload.BufferPool{}, gate: gate, untilEnd: &later, share: share}
		later.keep(r)
		later.add(r.bufs)
		if err := r.makeGroups(); err != nil {
			return err
		}
		if p.TopologyAuto {
			var hosts []string
			if hr, ok := t.(backends.HostReporter); ok {
				hosts = hr.Hosts()
			}
			top, err := world.TopologyFromHosts(hosts)
			if err != nil {
				return err
			}
			r.plan.Topology = top
		}
		if top := r.plan.Topology; top.TwoLevel() {
			if err := r.comm.SetTopology(top.PerServer); err != nil {
				return fmt.Errorf("--topology: %w", err)
			}
		}
		if p.Retry > 0 {
			r.comm.SetRetry(coll.Retry{Max: p.Retry, Hold: p.RetryHold, Interval: p.RetryInterval, Rearm: r.rearmOp})
		}
		r.measuredWithoutPayload()
		defer runctl.Track(r.comm)()
		prepErr := r.prepare(ctx)
		var emit func(*results.Record) error
		if t.Rank() == 0 {
			// The header goes out even when preparing failed, so that the
			// footer can report the error; and the footer goes out even
			// when one output failed the header, so that the others say
			// the run stopped early.
			begun = true
			if err := r.begin(sink); err != nil {
				return errors.Join(prepErr, fmt.Errorf("writing output: %w", err))
			}
			emit = func(rec *results.Record) error {
				sum.Add(*rec)
				return sink.Write(*rec)
			}
		}
		if prepErr != nil {
			return prepErr
		}
		return r.sweep(ctx, rows, emit)
	})
	runErr = hangReport(runErr)
	if runErr != nil && ctx.Err() != nil {
		runErr = fmt.Errorf("interrupted (%w): %w", context.Cause(ctx), runErr)
	}
	sum.Err = runErr
	if begun {
		if err := sink.End(sum); err != nil && runErr == nil {
			runErr = fmt.Errorf("writing output: %w", err)
		}
	}
	return sum, runErr
}

// rankRunner is the harness on one rank.
type rankRunner struct {
	plan Plan
	comm *coll.Comm
	bufs *payload.BufferPool
	// untilEnd frees what a transport may still write into once the run
	// has ended; nil outside Run.
	untilEnd *untilEnd
	llc      int64 // the last-level cache's bytes, read with --cache cold
	linkGBps float64
	linkFig  runctl.Settled        // the link probe's repetitions, with --link-bw auto
	cal      *estimate.Calibration // nil unless the plan needs the cost model
	// rearm restarts the time limit of the op in progress before it is
	// run again (--retry); nil outside a row.
	rearm func()
	// gate scopes --inject's faults to the measured ops (measureRow opens
	// it for a row's own calls); nil without faults, and for the link
	// probe and calibration, which measure rows of their own.
	gate *inject.Gate
	// groups holds this rank's communicator in each domain of the plan's
	// --group, over the same transport as comm, which stays the world's
	// for the harness's own calls.
	groups map[string]*coll.Comm
	// control is the control channel over comm (ctl), made at its first
	// use.
	control runctl.Ctl
	// share is the work every rank of the process shares; nil outside
	// Run.
	share *worldShare
	// sweeping is set while sweep runs, whose rows share one watchdog,
	// wd (watch); wd is nil outside it.
	sweeping bool
	wd       *runctl.Watchdog
	// fused is the time of the latest one-collective row of each shape in
	// the sweep (--fusion; finishRecord); nil without --fusion.
	fused map[Row]float64
}

// makeGroups makes this rank's communicator in each domain the sweep runs
// in.
func (r *rankRunner) makeGroups() error {
	r.groups = map[string]*coll.Comm{"": r.comm}
	for _, kind := range r.plan.Groups {
		t, err := group.New(r.comm.Transport(), r.plan.Layout.Members(kind, r.comm.Rank()))
		if err != nil {
			return fmt.Errorf("--group %s: %w", kind, err)
		}
		r.groups[kind] = coll.NewComm(t)
	}
	return nil
}

// measuredWithoutPayload, for a plan without payload, makes the
// communicators of the measured ops carry lengths only, the world's
// included. The harness's own calls on the world (gathering the timings,
// broadcasting constants) still carry data: they go through quiet,
// which turns the payload on for them. One Comm for both keeps one count
// of calls on the world, which re-execution (--retry) agrees on.
func (r *rankRunner) measuredWithoutPayload() {
	if !r.plan.NoPayload {
		return
	}
	for _, c := range r.groups {
		c.SetNoPayload(true)
	}
}

// quiet turns off, for one of the harness's own calls on the world, what
// must not act on it: faults, and no payload when the measured ops run
// without (measuredWithoutPayload). It returns what turns them back on.
func (r *rankRunner) quiet() (restore func()) {
	resume := r.gate.Suspend() // no fault acts on the harness's own calls
	if !r.comm.NoPayload() {
		return resume
	}
	r.comm.SetNoPayload(false)
	return func() {
		r.comm.SetNoPayload(true)
		resume()
	}
}

// rearmOp restarts the op time limit, if a row is being measured.
func (r *rankRunner) rearmOp() {
	if r.rearm != nil {
		r.rearm()
	}
}

// prepare measures the link if the plan asks for it and allocates this
// rank's buffers for the largest row.
func (r *rankRunner) prepare(ctx context.Context) error {
	if r.plan.LinkSource == LinkAuto {
		fig, err := r.probeLink(ctx)
		if err != nil {
			return fmt.Errorf("measuring the link (--link-bw auto): %w", err)
		}
		r.linkGBps, r.linkFig = fig.Value, fig
	}
	for _, c := range r.groups {
		if err := r.bufs.Ensure(ctx, r.plan.bufferNeed(c.Size()), r.plan.NoPayload); err != nil {
			return err
		}
	}
	if err := r.allocCold(); err != nil {
		return err
	}
	// Scratch space for the largest row now, once: grown row by row, a
	// communicator would keep every size it outgrew mapped (coll.Comm's
	// scratchBuf), without bound on a fine sweep, and fault pages in
	// inside timed calls.
	for _, g := range r.plan.groupList() {
		c := r.groups[g]
		if err := c.Reserve(ctx, int((r.plan.scratchNeed(c.Size())+1)/2)); err != nil {
			return err
		}
		if r.plan.sweepsMulSum() {
			if err := c.ReservePreMul(ctx, int(r.plan.bufferNeed(c.Size()))); err != nil {
				return err
			}
		}
	}
	if m := r.plan.modeled(); m != nil && r.plan.needsModel() {
		r.cal = r.share.simCalibration(func() *estimate.Calibration {
			return estimate.SimCalibration(m.LinkFigures(r.plan.settings()), r.plan.DTypes)
		})
	} else if r.plan.needsModel() && r.comm.Size() > 1 {
		cal, err := r.calibrate(ctx)
		if err == nil {
			err = r.calibrateMemory(ctx, cal)
		}
		if err != nil {
			return fmt.Errorf("calibrating the cost model for --algo auto: %w", err)
		}
		r.cal = cal
	}
	return nil
}

// begin writes the run's header to sink. The header is built on this
// frame, not the caller's: it takes 750 bytes of stack, which every rank's
// closure in Run would hold (and a simulated world of thousands of ranks
// grow every rank's stack for) where only rank 0 writes it.
//
//go:noinline
func (r *rankRunner) begin(sink results.Sink) error { return sink.Begin(r.header()) }

// sweep measures every row on this rank; rank 0 passes emit to receive the
// records.
func (r *rankRunner) sweep(ctx context.Context, rows []Row, emit func(*results.Record) error) error {
	runs := r.plan.runCount()
	forever := runs == RunsForever
	r.sweeping = true
	defer func() {
		r.sweeping = false
		r.endWatch()
	}()
	// r.fused holds the time of the latest one-collective row of each
	// shape, which the bucketed rows after it compare with (--fusion). It
	// lives on the heap, not on this frame: a map's first group of Row keys
	// takes 840 bytes of a rank's stack, which with the frames below it
	// grew every rank's stack of a simulated world once.
	r.fused = nil
	if len(r.plan.Fusion) > 0 {
		r.fused = map[Row]float64{}
	}
	compares := r.plan.Compares() // rows then say which algorithm they asked for
	for run := 1; forever || run <= runs; run++ {
		if forever && ctx.Err() != nil {
			return fmt.Errorf("run %d: %w", run, context.Cause(ctx))
		}
		for _, row := range rows {
			started := time.Now()
			if r.cal != nil {
				r.groups[row.Group].SetModel(r.share.rowModel(r.cal, row, r.plan.crossesServers(row.Group)))
			}
			rec, err := r.measureRow(ctx, row)
			if err != nil {
				// The row's watchdog ends with the row that failed, as it
				// would were it the row's own: what still runs under it
				// (an overlapped op started without waiting) ends now.
				r.endWatch()
				err = fmt.Errorf("%s: %w", describe(row), err)
				switch {
				case forever:
					err = fmt.Errorf("run %d: %w", run, err)
				case runs > 1:
					err = fmt.Errorf("run %d of %d: %w", run, runs, err)
				}
				// A row whose plain timing was measured before the failure
				// (in its overlap phase) is written all the same.
				if rec != nil && rec.Op != "" && emit != nil {
					r.finishRecord(rec, row, run, started, compares)
					if werr := emit(rec); werr != nil {
						err = errors.Join(err, fmt.Errorf("writing output: %w", werr))
					}
				}
				return err
			}
			if rec == nil { // a rank but 0: rank 0 writes the row
				continue
			}
			r.finishRecord(rec, row, run, started, compares)
			if emit != nil {
				if err := emit(rec); err != nil {
					return fmt.Errorf("writing output: %w", err)
				}
			}
		}
	}
	return nil
}

// finishRecord completes rank 0's record of row, measured in run from
// started: which algorithm was asked for when the rows compare several,
// the time over the one-collective row of its shape (--fusion; r.fused holds
// those), and with --stats the cost model's prediction.
func (r *rankRunner) finishRecord(rec *results.Record, row Row, run int, started time.Time, compares bool) {
	rec.Run, rec.Started, rec.Ended = run, started, time.Now()
	if compares {
		rec.AlgoRequested = row.Algo
	}
	if len(r.plan.Fusion) > 0 {
		shape := row
		shape.Count, shape.Bytes, shape.Buckets = 0, 0, 0
		if row.Buckets <= 1 {
			r.fused[shape] = rec.TimeUS
		} else if t := r.fused[shape]; t > 0 {
			rec.FusionSpeedup = rec.TimeUS / t
		}
	}
	if r.cal != nil && r.plan.Stats {
		bytes := row.Count * row.DType.Size()
		c := r.groups[row.Group]
		rec.ModelUS = 1e6 * coll.Predict(row.Op, rec.Algo, c.Size(), bytes, c.Model())
	}
}

// describe names a row in errors: "allreduce fp16 sum 1048576 B in-place".
func describe(row Row) string {
	parts := []string{row.Op.String(), row.DType.String()}
	if row.RedOp != 0 {
		parts = append(parts, row.RedOp.String())
	}
	if row.Root >= 0 {
		parts = append(parts, fmt.Sprintf("root %d", row.Root))
	}
	parts = append(parts, fmt.Sprintf("%d B", row.Bytes))
	if row.Place == InPlace {
		parts = append(parts, "in-place")
	}
	return strings.Join(parts, " ")
}

// redOpName is the redop column: the reduction, or "none".
func redOpName(o dtype.ReduceOp) string {
	if o == 0 {
		return "none"
	}
	return o.String()
}
