package scenario

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// Options are the command line's choices for running a scenario.
type Options struct {
	// World is where the scenario runs, as a sweep's: Backend, Timeout
	// (the limit for one collective, barrier or exchange), and Master,
	// Bind, ConnectTimeout, Args and Log, passed to the backend (Args must
	// make a rank process run the same scenario). Its Ranks is not read:
	// the world has the scenario's ranks (Scenario.Ranks, which the
	// command's -p and a launcher's size reach through Overrides).
	world.World
	// Faults are applied to every run, the baseline included (Inject,
	// InjectText as given, Seed for their random choices). A scenario runs
	// no call again: Retry and its pauses are not read.
	world.Faults
	JSON bool // write one JSON object instead of the text
	// Links are the links of a simulated world (--backend sim: --link-bw
	// and --topology), which its backend simulates with its own options
	// (World.Own; see backends.Settings and backends.Modeled); the zero
	// WorldLinks for the backend's defaults, and on other backends.
	Links backends.WorldLinks
	// NoPayload runs the collectives with lengths only (--sim-data=false,
	// sim only): no buffer takes memory and nothing is checked.
	NoPayload bool
}

// config is the backend configuration for a world of ranks.
func (o Options) config(ranks int) backends.Config {
	w := o.World
	w.Ranks = ranks
	return w.Config(o.Links, false)
}

// CheckBackend has o's backend check the configuration of a world of
// ranks (backends.CheckConfig) before anything starts.
func (o Options) CheckBackend(ranks int) error {
	b, err := o.Resolve()
	if err != nil {
		return err
	}
	return backends.CheckConfig(b, o.config(ranks))
}

// Run runs sc in one world on o's backend: it measures each domain's
// links and the compute loop, runs the step with only o's faults (the
// baseline), then once per domain with links with that domain's links
// slowed by sc.Slowdown, and writes the report to out from the process that
// hosts rank 0, which also gets it returned (other processes get nil).
func Run(ctx context.Context, sc *Scenario, o Options, out io.Writer) (*Report, error) {
	b, err := o.Resolve()
	if err != nil {
		return nil, fmt.Errorf("--backend: %w", err)
	}
	var rep *Report
	// Every rank's harness stays reachable until the transport has ended:
	// its communicators' scratch space is unmapped once they are collected
	// (coll.Comm), and a receive that failed on its context may be filled
	// until then (tcp's reader goes on with it until the endpoint closes).
	var (
		keptMu sync.Mutex
		kept   []*scenRank
	)
	err = b.Run(ctx, o.config(sc.Ranks), func(ctx context.Context, t backends.Transport) error {
		if runctl.NeedsAgreement(b, sc.Ranks) {
			if err := runctl.AgreeOn(ctx, t, o.Timeout, scenarioFields(sc, o)); err != nil {
				return err
			}
		}
		r, err := newScenRank(sc, o, t)
		if err != nil {
			return fmt.Errorf("scenario %q, world rank %d: %w", sc.Name, t.Rank(), err)
		}
		keptMu.Lock()
		kept = append(kept, r)
		keptMu.Unlock()
		res, err := r.run(ctx)
		if err != nil {
			return fmt.Errorf("scenario %q, world rank %d: %w", sc.Name, t.Rank(), err)
		}
		if t.Rank() == 0 {
			rep = res
		}
		return nil
	})
	runtime.KeepAlive(kept)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted (%w): %w", context.Cause(ctx), err)
		}
		return nil, err
	}
	if rep == nil {
		return nil, nil
	}
	rep.Backend, rep.Unchecked = o.Backend, o.NoPayload
	if m, ok := b.(backends.Modeled); ok && o.Caps().Simulated {
		rep.Simulated = m.DescribeLinks(o.Settings(o.Links), sc.Ranks)
	}
	if len(o.Inject) > 0 {
		rep.Faults = fmt.Sprintf("%s (seed %d)", o.InjectText, o.Seed)
	}
	if o.JSON {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	if err != nil {
		return rep, fmt.Errorf("writing the report: %w", err)
	}
	return rep, nil
}

// scenRoundIters is how many timed iterations a run does in one round:
// the runs (the baseline and each slowed domain) take turns round after
// round, so that whatever else the machine does over time, and any drift
// of its speed, falls on them all alike.
const scenRoundIters = 2

// scenRoundsOf returns how many rounds iters timed iterations take.
func scenRoundsOf(iters int) int { return (iters + scenRoundIters - 1) / scenRoundIters }

// run is the whole scenario on this rank: the probes, then every run, in
// rounds. Every rank returns the same results; rank 0's report is the one
// written.
func (r *scenRank) run(ctx context.Context) (*Report, error) {
	r.world = coll.NewComm(r.t)
	r.untrack = append(r.untrack, runctl.Track(r.world))
	defer func() {
		for _, u := range r.untrack {
			u()
		}
	}()
	if err := r.probe(ctx); err != nil {
		return nil, err
	}
	if err := r.calibrate(ctx); err != nil {
		return nil, fmt.Errorf("calibrating the compute loop: %w", err)
	}
	// runs[0] is the baseline, runs[1+d] the run with domain d slowed.
	runs := make([]*scenResult, 1+len(r.domains))
	rounds := scenRoundsOf(r.sc.Iterations)
	for round := range rounds {
		iters := min(scenRoundIters, r.sc.Iterations-round*scenRoundIters)
		// Later rounds need less: the communicators have their scratch
		// space, the buffers are touched.
		warmup := r.sc.Warmup
		if round > 0 {
			warmup = min(warmup, 1)
		}
		for d := -1; d < len(r.domains); d++ {
			if d >= 0 && !r.links[d] {
				continue
			}
			res, err := r.runPhase(ctx, d, iters, warmup, round == 0)
			if err != nil {
				if d < 0 {
					return nil, fmt.Errorf("baseline run: %w", err)
				}
				return nil, fmt.Errorf("run with %s links slowed: %w", r.domains[d], err)
			}
			runs[d+1] = runs[d+1].add(res)
		}
	}
	return r.report(runs[0], runs[1:]), nil
}

// phaseSpec returns the faults of this rank in the phase that slows domain
// d (-1: the baseline): the --inject faults, and on every link from this
// rank to another rank of its group in d a delay of Slowdown% of the
// domain's alpha and a bandwidth limit of its beta / Slowdown%, which
// holds a message of s bytes Slowdown% of s/beta longer.
func (r *scenRank) phaseSpec(d int) inject.Spec {
	spec := slices.Clone(r.o.Inject)
	if d < 0 {
		return spec
	}
	delay, rate := r.slowFaults(d)
	for _, peer := range r.members(r.domains[d]) {
		if peer == r.rank {
			continue
		}
		spec = append(spec,
			inject.Fault{Kind: inject.Delay, Min: delay, Max: delay, From: r.rank, To: peer},
			inject.Fault{Kind: inject.Bandwidth, Rate: rate, From: r.rank, To: peer})
	}
	return spec
}

// slowFaults returns the delay and the bandwidth limit (bytes per second)
// that slow domain d's links by the scenario's slowdown.
func (r *scenRank) slowFaults(d int) (time.Duration, float64) {
	frac := r.sc.Slowdown / 100
	return time.Duration(frac * r.alpha[d] * 1e9), r.beta[d] / frac
}

// runComms returns this rank's communicators in run d (-1: the baseline),
// one per domain, over the world's transport wrapped with the run's
// faults.
func (r *scenRank) runComms(d int) ([]*coll.Comm, error) {
	if c := r.comms[d+1]; c != nil {
		return c, nil
	}
	t, gate := inject.WrapGated(r.t, r.phaseSpec(d), r.o.Seed)
	r.gates[d+1] = gate
	comms := make([]*coll.Comm, len(r.domains))
	for i, dom := range r.domains {
		c, err := r.domainComm(t, dom)
		if err != nil {
			return nil, err
		}
		c.SetNoPayload(r.o.NoPayload)
		comms[i] = c
		r.untrack = append(r.untrack, runctl.Track(c))
	}
	r.comms[d+1] = comms
	return comms, nil
}

// runPhase runs the step with domain d slowed (-1: none): warmup
// iterations, then iters timed ones, then with check a checked one. All
// ranks switch runs after a barrier, so every link carries the same calls
// in the same order on both of its ends.
func (r *scenRank) runPhase(ctx context.Context, d, iters, warmup int, check bool) (*scenResult, error) {
	comms, err := r.runComms(d)
	if err != nil {
		return nil, err
	}
	if err := r.barrier(ctx); err != nil {
		return nil, err
	}
	r.curRun = d + 1
	wd := runctl.NewWatchdog(ctx, r.o.Timeout)
	defer wd.Stop()
	gate := r.gates[d+1]
	gate.Open(wd.Context(), r.o.Timeout)
	defer gate.Close()
	corrupted := gate.Corrupted()
	k := scenSampleLen(len(r.domains))
	scratch := make([]float64, k)
	for i := range warmup {
		clear(scratch)
		if err := r.iterate(wd, comms, scratch, nil); err != nil {
			return nil, fmt.Errorf("warm-up iteration %d: %w", i+1, err)
		}
	}
	if err := r.barrier(ctx); err != nil {
		return nil, err
	}
	samples := make([]float64, iters*k)
	r.timing = true
	for i := range iters {
		if err := r.iterate(wd, comms, samples[i*k:(i+1)*k], nil); err != nil {
			r.timing = false
			return nil, fmt.Errorf("timed iteration %d: %w", i+1, err)
		}
	}
	r.timing = false
	// Corruption --inject put where the check cannot see it (warm-up and
	// timed iterations, or the checked one when the check found nothing,
	// as a max or min can hide a flipped bit) is always reported: one
	// wrong element per corrupted message, as a sweep counts it.
	unchecked := gate.Corrupted() - corrupted
	wrong := make([]float64, len(r.sc.Steps)+1)
	if check && !r.o.NoPayload {
		clear(scratch)
		if err := r.iterate(wd, comms, scratch, wrong); err != nil {
			return nil, fmt.Errorf("checked iteration: %w", err)
		}
		var found float64
		for _, w := range wrong {
			found += w
		}
		if found == 0 {
			unchecked = gate.Corrupted() - corrupted
		}
	}
	wrong[len(r.sc.Steps)] = float64(unchecked)
	return r.combine(ctx, iters, samples, wrong)
}

// scenSampleLen is how many values one iteration records on a rank: the
// step's time, the compute time, then each domain's communication and
// exposed time.
func scenSampleLen(domains int) int { return 2 + 2*domains }
