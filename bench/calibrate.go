package bench

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/results"
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
	calLarge  = 4 << 20
	calReduce = 1 << 20
	calMin    = 64 << 10
	calBudget = 256 << 20
	calWarmup = 3
	calIters  = 30
)

// calSizes returns the sizes of the ring step and of the reductions that
// calibrate on a world of ranks ranks.
func calSizes(ranks int) (large, reduce int64) {
	large = shareBudget(calBudget, ranks, calMin, calLarge)
	return large, min(large, calReduce)
}

// calibration is the fitted model: alpha and beta for the backend, gamma
// per data type.
type calibration struct {
	base   coll.Model
	dtypes []dtype.DType // in the plan's order
	gamma  map[dtype.DType]float64
	// simulated: the constants are the simulated links', not measured.
	simulated bool
	// mem, when set, holds beta and gamma measured from memory
	// (calibrate_mem.go).
	mem *memConstants
}

// model returns the model for rows of data type dt and bytes bytes (the
// row's size).
func (c *calibration) model(dt dtype.DType, bytes int64) coll.Model {
	m := c.base
	if g, ok := c.gamma[dt]; ok {
		m.Gamma = g
	}
	if c.mem != nil {
		share := memShare(bytes, c.mem.bytes)
		m.Beta = lerp(m.Beta, c.mem.beta, share)
		if g, ok := c.mem.gamma[dt]; ok {
			m.Gamma = lerp(m.Gamma, g, share)
		}
	}
	return m
}

// simCalibration is the model of the links the sim backend simulates: its
// own figures, two levels when it has servers, nothing measured. A
// simulated receive-and-reduce moves the bytes, then reduces them, or
// where receivers move the data (Pull), does both in one pass (Fused).
func simCalibration(links backends.LinkModel, dtypes []dtype.DType) *calibration {
	l := links.WithDefaults()
	base := coll.Model{
		Alpha: l.IntraAlpha.Seconds(), Beta: 1 / (l.IntraGBps * 1e9), Gamma: 1 / (l.ReduceGBps * 1e9),
		Copy:      1 / (l.CopyGBps * 1e9),
		PerServer: l.PerServer, InterAlpha: l.InterAlpha.Seconds(), InterBeta: 1 / (l.InterGBps * 1e9),
		Gap: l.Gap.Seconds(), Fused: l.Pull,
	}
	c := &calibration{base: base, dtypes: dtypes, gamma: map[dtype.DType]float64{}, simulated: true}
	for _, dt := range dtypes {
		c.gamma[dt] = base.Gamma
	}
	return c
}

// String describes the constants for the header.
func (c *calibration) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "alpha %.1f us  beta %.2f GB/s  gamma", c.base.Alpha*1e6, 1/c.base.Beta/1e9)
	for _, dt := range c.dtypes {
		fmt.Fprintf(&b, " %v %.2f GB/s", dt, 1/c.gamma[dt]/1e9)
	}
	if c.base.Copy > 0 {
		fmt.Fprintf(&b, "  copy %.2f GB/s", 1/c.base.Copy/1e9)
	}
	if c.base.Fused {
		b.WriteString("  fused receive-reduce")
	}
	if c.mem != nil {
		fmt.Fprintf(&b, "  from %s: beta %.2f GB/s  gamma", units.FormatSize(c.mem.bytes), 1/c.mem.beta/1e9)
		for _, dt := range c.dtypes {
			fmt.Fprintf(&b, " %v %.2f GB/s", dt, 1/c.mem.gamma[dt]/1e9)
		}
	}
	if c.base.PerServer > 0 && c.base.InterBeta > 0 {
		fmt.Fprintf(&b, "  between servers: alpha %.1f us  beta %.2f GB/s", c.base.InterAlpha*1e6, 1/c.base.InterBeta/1e9)
	}
	if c.simulated {
		b.WriteString(" (the simulated links' own figures; auto picks the algorithm this model predicts fastest)")
	} else {
		b.WriteString(" (measured before the sweep; auto picks the algorithm this model predicts fastest)")
	}
	return b.String()
}

// needsModel reports whether the plan uses the model: auto chooses with it,
// and --stats prints its predictions.
func (p Plan) needsModel() bool {
	return p.asks(coll.Auto) || p.Stats
}

// calibrate measures the model's constants on every rank alike.
func (r *rankRunner) calibrate(ctx context.Context) (*calibration, error) {
	n := r.comm.Size()
	if n == 1 {
		return &calibration{base: coll.DefaultModel}, nil // nothing to choose between
	}
	// The sweep's buffers, allocated and touched already, when they are
	// large enough; else two of the ring step's size for the calibration alone.
	stepBytes, reduceBytes := calSizes(n)
	bp := r.bufs
	if int64(len(bp.a)) < stepBytes || int64(len(bp.b)) < stepBytes {
		bp = &bufferPool{}
		defer bp.free()
		if err := bp.alloc(int(stepBytes)); err != nil {
			return nil, err
		}
		touch(bp.a)
		touch(bp.b)
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
	gamma, err := r.slowestReduce(ctx, dts, bp.a[:reduceBytes], bp.b[:reduceBytes])
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
	c := &calibration{base: coll.Model{Alpha: fit[0], Beta: fit[1], Gamma: coll.DefaultModel.Gamma},
		dtypes: dts, gamma: map[dtype.DType]float64{}}
	c.base = withTransport(c.base, r.comm.Transport())
	for i, dt := range dts {
		c.gamma[dt] = max(fit[2+i], 1e-12)
	}
	return c, nil
}

// timeProbe times row with algo on bufs (probeRow) and returns the
// seconds of one call.
func (r *rankRunner) timeProbe(ctx context.Context, bufs *bufferPool, row Row, algo string, warmup, iters int) (float64, error) {
	rec, err := r.probeRow(ctx, bufs, row, algo, warmup, iters)
	return rec.TimeUS * 1e-6, err
}

// probeRow measures row with algo on bufs, warmup untimed and iters timed
// iterations, as a measured row with no check and nothing beside it.
func (r *rankRunner) probeRow(ctx context.Context, bufs *bufferPool, row Row, algo string, warmup, iters int) (results.Record, error) {
	probe := *r
	probe.bufs = bufs
	probe.gate = nil // faults act on measured ops only, not on probes
	row.Algo = algo
	probe.plan.Warmup, probe.plan.Iters, probe.plan.Check = warmup, iters, false
	probe.plan.LinkSource, probe.plan.Algo, probe.plan.OpAlgos, probe.plan.Stats = "", algo, nil, false
	probe.plan.Overlap, probe.plan.OverlapAuto = 0, false // measured rows only
	return probe.measureRow(ctx, row)
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
// transport whose receiver reads the sender's buffer (shm) a receive and
// its reduction are one pass (Fused), and the receiver copies with its
// own CPU, so the ranks share this process's (Cores); on any other that
// runs in wall time (tcp) the sender's CPU copies each message out
// (SenderMoves), and when every rank is on one host, its processes share
// the host's CPUs (Cores) as shm's ranks do.
func withTransport(m coll.Model, t backends.Transport) coll.Model {
	if dr, ok := t.(backends.DirectReader); ok && dr.ReadsSenderBuffer() {
		m.Fused, m.Cores = true, runtime.GOMAXPROCS(0)
		return m
	}
	if _, virtual := backends.ClockOf(t); !virtual {
		m.SenderMoves = true
		if hosts, ok := backends.HostsOf(t); ok && oneHost(hosts) {
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
