package bench

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/units"
)

// Calibration of the cost model that --algo auto chooses with (coll.Model).
// Before the sweep the ranks measure, on the backend in use and with every
// rank busy at once, as in a collective:
//
//   - alpha: the time, as rows count it, of a recursive-doubling allreduce
//     of calSmall bytes over its number of steps: what one exchange costs
//     inside an algorithm;
//   - beta: the extra time per byte of a ring step (send to the right,
//     receive from the left) of calLarge bytes;
//   - gamma, per data type swept: the time per byte of the sum kernel on
//     calReduce bytes, every rank reducing at the same time (so that ranks
//     sharing a core share its time, as in a collective).
//
// Rank 0 fits the constants and broadcasts them, so every rank chooses alike.
// Like the link probe's, the buffers share a budget among the world's ranks
// (calSizes): calLarge and calReduce up to 32 ranks, less beyond, at least
// calMin.
const (
	calSmall  = 8
	calLarge  = estimate.CalLarge
	calReduce = 1 << 20
	calMin    = 64 << 10
	calBudget = 256 << 20
	calWarmup = 3
	calIters  = 30
)

// calSizes returns the sizes of the ring step and of the reductions that
// calibrate on a world of ranks ranks.
func calSizes(ranks int) (large, reduce int64) {
	large = runctl.ShareBudget(calBudget, ranks, calMin, calLarge)
	return large, min(large, calReduce)
}

// needsModel reports whether the plan uses the model: auto chooses with it,
// and --stats prints its predictions.
func (p *Plan) needsModel() bool {
	return p.asks(coll.Auto) || p.Stats
}

// calibrate measures the model's constants on every rank alike.
func (r *rankRunner) calibrate(ctx context.Context) (_ *estimate.Calibration, err error) {
	n := r.comm.Size()
	if n == 1 {
		return &estimate.Calibration{Base: coll.DefaultModel}, nil // nothing to choose between
	}
	// The sweep's buffers, allocated and touched already, when they are
	// large enough; else two of the ring step's size for the calibration alone.
	stepBytes, reduceBytes := calSizes(n)
	bp := r.bufs
	if int64(len(bp.A)) < stepBytes || int64(len(bp.B)) < stepBytes {
		own := &payload.BufferPool{}
		bp = own
		defer func() { r.release(own, err) }()
		if err := bp.Alloc(int(stepBytes)); err != nil {
			return nil, err
		}
		payload.Touch(bp.A)
		payload.Touch(bp.B)
	}
	timeRow := func(row Row, algo string) (float64, error) {
		return r.timeProbe(ctx, bp, row, algo, calWarmup, calIters)
	}
	// alpha: a recursive-doubling allreduce of calSmall bytes is
	// rdSteps(n) exchanges of next to nothing.
	small, err := timeRow(Row{Op: coll.AllReduce, DType: dtype.Uint8, RedOp: dtype.Sum, Root: -1, Place: OutOfPlace,
		Count: calSmall, Bytes: calSmall}, "rd")
	if err != nil {
		return nil, fmt.Errorf("timing a %d-byte allreduce: %w", calSmall, err)
	}
	small /= rdSteps(n)
	large, err := timeRow(Row{Op: coll.SendRecv, DType: dtype.Uint8, Root: -1, Place: OutOfPlace,
		Count: int(stepBytes), Bytes: stepBytes}, coll.Auto)
	if err != nil {
		return nil, fmt.Errorf("timing a %s step: %w", units.FormatSize(stepBytes), err)
	}

	dts := r.plan.DTypes
	gamma, err := r.slowestReduce(ctx, dts, bp.A[:reduceBytes], bp.B[:reduceBytes])
	if err != nil {
		return nil, err
	}
	// Rank 0 fits; everyone receives the same constants.
	fit := make([]float64, 2+len(dts))
	if r.comm.Rank() == 0 {
		fit[0] = max(small, 1e-7)
		fit[1] = max((large-small)/float64(stepBytes-calSmall), 1e-12)
		copy(fit[2:], gamma)
	}
	if fit, err = r.broadcastFloats(ctx, fit); err != nil {
		return nil, err
	}
	c := &estimate.Calibration{Base: coll.Model{Alpha: fit[0], Beta: fit[1], Gamma: coll.DefaultModel.Gamma},
		DTypes: dts, Gamma: map[dtype.DType]float64{}}
	c.Base = withTransport(c.Base, r.comm.Transport())
	for i, dt := range dts {
		c.Gamma[dt] = max(fit[2+i], 1e-12)
	}
	return c, nil
}

// timeProbe times row with algo on bufs (probeRow) and returns the
// seconds of one call: the median iteration of the slowest rank, not the
// mean, which on a loaded host a few descheduled iterations inflate. The
// model's constants are costs of a call as it usually goes; an inflated
// alpha made auto prefer fewer, larger steps (tcp, 2 ranks, 1 MiB: oneshot
// where rhd measured 2.5 times as fast).
func (r *rankRunner) timeProbe(ctx context.Context, bufs *payload.BufferPool, row Row, algo string, warmup, iters int) (float64, error) {
	rec, err := r.probeRow(ctx, bufs, row, algo, warmup, iters)
	return rec.P50US * 1e-6, err
}

// probeRow measures row with algo on bufs, warmup untimed and at least
// iters timed iterations, as a measured row with no check and nothing
// beside it, measured the default way (-a, -m, -z, -C, -u do not act). Off virtual time it runs at least probeMinTime of timed work
// too, as --benchtime does (benchtime.go), so that a probe of small
// messages (calibration's alpha) is not a handful of samples that a few
// scheduler wake-ups decide.
func (r *rankRunner) probeRow(ctx context.Context, bufs *payload.BufferPool, row Row, algo string, warmup, iters int) (results.Record, error) {
	probe := *r
	probe.bufs = bufs
	probe.gate = nil                      // faults act on measured ops only, not on probes
	probe.sweeping, probe.wd = false, nil // a probe's rows have a watchdog each
	row.Algo = algo
	probe.plan.Warmup, probe.plan.Iters, probe.plan.Check = warmup, iters, false
	probe.plan.LinkSource, probe.plan.Algo, probe.plan.OpAlgos, probe.plan.Stats = "", algo, nil, false
	probe.plan.Overlap, probe.plan.OverlapAuto = 0, false // measured rows only
	probe.plan.BenchTime = 0
	probe.plan.Method = Method{} // probes measure as the tool does by default
	if !r.plan.Caps().Simulated {
		probe.plan.BenchTime = probeMinTime
	}
	rec, err := probe.measureRow(ctx, row)
	if rec == nil {
		return results.Record{}, err
	}
	return *rec, err
}

// slowestReduce times the sum kernel of each of dts on a and b, every
// rank after a barrier, so that ranks sharing a core share its time as in
// a collective, and returns to rank 0 the slowest rank's seconds per byte
// for each (zeros elsewhere).
func (r *rankRunner) slowestReduce(ctx context.Context, dts []dtype.DType, a, b []byte) ([]float64, error) {
	mine := make([]float64, len(dts))
	for i, dt := range dts {
		if err := r.barrier(ctx); err != nil {
			return nil, err
		}
		mine[i] = reduceCost(dt, a, b)
	}
	all, err := r.gatherFloats(ctx, mine)
	if err != nil {
		return nil, err
	}
	slowest := make([]float64, len(dts))
	if r.comm.Rank() == 0 {
		for rk := range r.comm.Size() {
			for i := range dts {
				slowest[i] = max(slowest[i], all[rk*len(dts)+i])
			}
		}
	}
	return slowest, nil
}

// withTransport returns m with what t says about how it moves data: on a
// transport whose receiver reads the sender's buffer (shm, proc) a receive
// and its reduction are one pass (Fused), and the receiver copies with its
// own CPU, so the ranks share CPUs (Cores): this process's when they are
// its goroutines (shm), the host's when they are processes of one host
// that report it (proc, whose ranks each run Go code on their share of the
// host's CPUs, as few as one, while together they have all of them); on
// any other that runs in wall time (tcp) the sender's CPU copies each
// message out (SenderMoves), and when every rank is on one host, its
// processes share the host's CPUs (Cores) as shm's ranks do.
func withTransport(m coll.Model, t backends.Transport) coll.Model {
	hosts, hasHosts := backends.HostsOf(t)
	if dr, ok := t.(backends.DirectReader); ok && dr.ReadsSenderBuffer() {
		m.Fused, m.Cores = true, runtime.GOMAXPROCS(0)
		if hasHosts && oneHost(hosts) {
			m.Cores = runtime.NumCPU()
		}
		return m
	}
	if _, virtual := backends.ClockOf(t); !virtual {
		m.SenderMoves = true
		if hasHosts && oneHost(hosts) {
			m.Cores = runtime.NumCPU()
		}
	}
	return m
}

// oneHost reports whether hosts name one host, and at least two ranks.
func oneHost(hosts []string) bool {
	return len(hosts) > 1 && !slices.ContainsFunc(hosts, func(h string) bool { return h != hosts[0] })
}

// reduceCost returns the seconds per byte of dt's sum kernel on a and b
// (a = a + b), over a few rounds after a warm-up round.
func reduceCost(dt dtype.DType, a, b []byte) float64 {
	const rounds = 4
	sum := dtype.Reducer(dt, dtype.Sum)
	n := len(a) / dt.Size() * dt.Size()
	sum(a[:n], a[:n], b[:n])
	start := time.Now()
	for range rounds {
		sum(a[:n], a[:n], b[:n])
	}
	return time.Since(start).Seconds() / rounds / float64(n)
}

// rdSteps is the number of exchanges of a recursive-doubling allreduce on
// n ranks: log2 of the largest power of two p <= n, plus the fold and the
// unfold when n is not p.
func rdSteps(n int) float64 {
	steps := float64(bits.Len(uint(n)) - 1)
	if n&(n-1) != 0 {
		steps += 2
	}
	return max(steps, 1)
}
