package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/runctl"
)

// iterate runs the step once on this rank and adds its times, in seconds,
// to s (laid out as scenSampleLen says). With wrong non-nil it checks
// every collective call and adds its wrong elements to wrong[step].
func (r *scenRank) iterate(wd *runctl.Watchdog, comms []*coll.Comm, s, wrong []float64) error {
	iter := r.began[r.curRun]
	r.began[r.curRun]++
	for _, c := range r.colls {
		if c != nil {
			c.use(iter, r.timing && r.curRun == 0)
		}
	}
	start := r.now()
	for _, a := range r.actions {
		var c *scenColl
		if a.coll >= 0 {
			c = r.colls[a.coll]
		}
		switch {
		case c == nil:
			t0 := r.now()
			if err := r.compute(wd.Context(), a.compute); err != nil {
				return fmt.Errorf("computing: %w", err)
			}
			s[1] += (r.now() - t0).Seconds()
		case a.compute == 0:
			t0 := r.now()
			err := r.calls(wd, comms[c.dom], c, wrong)
			took := (r.now() - t0).Seconds()
			s[2+2*c.dom] += took
			s[3+2*c.dom] += took
			if err != nil {
				return fmt.Errorf("%s: %w", stepLabel(c.index, c.step.Name), err)
			}
		default:
			if err := r.overlapped(wd, comms[c.dom], c, a.compute, s, wrong); err != nil {
				return fmt.Errorf("%s (overlapped): %w", stepLabel(c.index, c.step.Name), err)
			}
		}
	}
	s[0] += (r.now() - start).Seconds()
	return nil
}

// overlapped runs collective c overlapped with a compute phase of d and
// adds the times to s: the compute's, the collective's from start to end,
// and the time the step waited for it after the compute.
func (r *scenRank) overlapped(wd *runctl.Watchdog, comm *coll.Comm, c *scenColl, d time.Duration, s, wrong []float64) error {
	t0 := r.now()
	if r.virtual() {
		err := r.calls(wd, comm, c, wrong)
		end := r.now()
		r.clock.HoldUntil(t0 + d)
		s[1] += d.Seconds()
		s[2+2*c.dom] += (end - t0).Seconds()
		s[3+2*c.dom] += max(end-t0-d, 0).Seconds()
		return err
	}
	// The collective owns its buffers and its Comm until done is closed;
	// meanwhile this goroutine only computes.
	done := make(chan struct{})
	var end time.Duration
	var err error
	go func() {
		defer close(done)
		err = r.calls(wd, comm, c, wrong)
		end = r.now()
	}()
	c0 := r.now()
	lerr := r.compute(wd.Context(), d)
	w0 := r.now()
	<-done
	s[1] += (w0 - c0).Seconds()
	s[2+2*c.dom] += (end - t0).Seconds()
	// Blocked from the compute's end to the collective's: the time this
	// goroutine took to wake after that is the host's, not the domain's
	// (on a loaded host it made exposed exceed the collective's own time).
	s[3+2*c.dom] += max(end-w0, 0).Seconds()
	return errors.Join(err, lerr)
}

// calls runs collective c its number of times per step, each under the
// time limit; with wrong non-nil each on fresh inputs and poisoned output,
// checked after.
func (r *scenRank) calls(wd *runctl.Watchdog, comm *coll.Comm, c *scenColl, wrong []float64) error {
	for k := range c.step.Calls {
		if wrong != nil {
			payload.Poison(c.args.Recv)
			payload.FillInputs(c.args, c.pattern, c.rank)
		}
		if c.model != nil {
			comm.SetModel(*c.model)
		}
		wd.Arm(time.Now())
		_, err := comm.Run(wd.Context(), coll.Auto, c.args)
		wd.Disarm()
		if err != nil {
			if c.step.Calls > 1 {
				return fmt.Errorf("call %d of %d: %w", k+1, c.step.Calls, err)
			}
			return err
		}
		if wrong != nil {
			wrong[c.index] += float64(payload.CountWrong(c.args, c.row, c.pattern, c.rank, c.n))
		}
	}
	return nil
}

// scenResult is a run's figures, the same on every rank: sums over its
// timed iterations, in seconds, of the step's time (the slowest rank's,
// whose steps took longest in all) and of that same rank's compute and
// domain times (so that they add up to the step); means are sums over
// iters.
type scenResult struct {
	iters                  int
	step, stepMin, stepMax float64
	compute                float64
	comm, exposed          []float64 // by domain
	wrong                  []int64   // by step, every rank's together
	// injected counts the messages --inject corrupted where the check
	// could not see them, every rank's together.
	injected int64
	// rounds is the mean step time of each round, in order (a run's
	// rounds are its repetitions: see interval.go).
	rounds []float64
}

// add returns the sums of r and o (r may be nil).
func (r *scenResult) add(o *scenResult) *scenResult {
	if r == nil {
		return o
	}
	r.iters += o.iters
	r.step += o.step
	r.stepMin, r.stepMax = min(r.stepMin, o.stepMin), max(r.stepMax, o.stepMax)
	r.compute += o.compute
	for d := range r.comm {
		r.comm[d] += o.comm[d]
		r.exposed[d] += o.exposed[d]
	}
	for i := range r.wrong {
		r.wrong[i] += o.wrong[i]
	}
	r.injected += o.injected
	r.rounds = append(r.rounds, o.rounds...)
	return r
}

// mean returns a sum's mean over the iterations.
func (r *scenResult) mean(sum float64) float64 { return sum / float64(max(r.iters, 1)) }

// combine turns every rank's samples of iters iterations into the run's
// figures: the slowest rank, the one whose timed steps took longest in all
// (a max, then a min of the ranks that reached it), then that rank's
// iterations and breakdown (a sum to which every other rank adds zero),
// and the wrong counts (a sum): one per step, then the corrupted messages
// the check could not see. One rank's iterations, not each iteration's
// slowest rank: the ranks' iterations are not the same stretch of time (a
// rank that waited in one finds its next messages already in), and
// per-iteration maxima add up to more than any rank's run lasted.
func (r *scenRank) combine(ctx context.Context, iters int, samples, wrong []float64) (*scenResult, error) {
	k := scenSampleLen(len(r.domains))
	var total float64
	for i := range iters {
		total += samples[i*k]
	}
	slowest, err := r.allreduce(ctx, dtype.Max, []float64{total})
	if err != nil {
		return nil, err
	}
	mine := []float64{math.Inf(1)}
	if total == slowest[0] {
		mine[0] = float64(r.rank)
	}
	owner, err := r.allreduce(ctx, dtype.Min, mine)
	if err != nil {
		return nil, err
	}
	contrib := make([]float64, iters*k+len(wrong))
	if owner[0] == float64(r.rank) {
		copy(contrib[:iters*k], samples[:iters*k])
	}
	copy(contrib[iters*k:], wrong)
	sum, err := r.allreduce(ctx, dtype.Sum, contrib)
	if err != nil {
		return nil, err
	}
	res := &scenResult{iters: iters, stepMin: math.Inf(1), comm: make([]float64, len(r.domains)),
		exposed: make([]float64, len(r.domains)), wrong: make([]int64, len(wrong)-1)}
	for i := range iters {
		row := sum[i*k : (i+1)*k]
		res.step += row[0]
		res.stepMin, res.stepMax = min(res.stepMin, row[0]), max(res.stepMax, row[0])
		res.compute += row[1]
		for d := range r.domains {
			res.comm[d] += row[2+2*d]
			res.exposed[d] += row[3+2*d]
		}
	}
	for i, w := range sum[iters*k : len(sum)-1] {
		res.wrong[i] = int64(w)
	}
	res.injected = int64(sum[len(sum)-1])
	res.rounds = []float64{res.mean(res.step)}
	return res, nil
}
