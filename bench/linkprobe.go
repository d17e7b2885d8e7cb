package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/units"
)

// The link probe behind --link-bw auto: every rank sends probeSize bytes
// to its right neighbour while receiving as much from its left, all at
// once, which is what one rank can move when every rank moves data (each
// rank's link is busy in both directions, as in a ring step). The figure is
// the bytes one rank receives per second, averaged as rows are.
//
// The probe's two buffers a rank share probeBudget among the ranks of the
// world, at most probeMax and at least probeMin a message: 32 MiB up to 16
// ranks, 1 MiB at 512, so that many ranks on one machine do not take most
// of its memory for the probe alone. Every rank computes the same size from
// the world's size, hosted here or not.
const (
	probeMax    = 32 << 20
	probeMin    = runctl.ProbeMin
	probeBudget = 1 << 30
	probeWarmup = 3
	probeIters  = 10
	// probeMinTime is the least timed work of the link probe and of each
	// of the calibration's probes (probeRow), besides their counts.
	probeMinTime = 20 * time.Millisecond
)

// probeSize returns the probe's message size on a world of ranks ranks.
func probeSize(ranks int) int64 {
	return runctl.ShareBudget(probeBudget, ranks, probeMin, probeMax)
}

// probeLink measures the link on this backend, repeating the probe until
// it agrees with itself (runctl.Settle), and returns the figure, on every
// rank alike (rank 0's readings, broadcast after each repetition).
func (r *rankRunner) probeLink(ctx context.Context) (_ runctl.Settled, err error) {
	n := r.comm.Size()
	if n == 1 {
		return runctl.Settled{}, nil // no link to measure with a single rank
	}
	bp := &payload.BufferPool{}
	defer func() { r.release(bp, err) }()
	size := probeSize(n)
	if err := bp.Alloc(int(size)); err != nil {
		return runctl.Settled{}, err
	}
	row := Row{Op: coll.SendRecv, DType: dtype.Uint8, Root: -1, Place: OutOfPlace, Count: int(size), Bytes: size}
	start := time.Now()
	return runctl.Settle(func(rep int) (runctl.Reading, error) {
		warmup := probeWarmup
		if rep > 0 {
			warmup = 1 // the buffers are touched, the algorithm's scratch in place
		}
		rec, err := r.probeRow(ctx, bp, row, coll.Auto, warmup, probeIters)
		if err != nil {
			return runctl.Reading{}, err
		}
		// Every rank needs the figure and the time, to stop at the same
		// repetition; rank 0 computed them. Spread them with a broadcast
		// so all ranks agree.
		out, err := r.broadcastFloats(ctx, []float64{rec.BusBW, time.Since(start).Seconds()})
		if err != nil {
			return runctl.Reading{}, err
		}
		return runctl.Reading{Value: out[0], Elapsed: time.Duration(out[1] * float64(time.Second))}, nil
	})
}

// probeDescription says how the probe measured, for the header.
func (r *rankRunner) probeDescription() string {
	if r.comm.Size() == 1 {
		return "auto: one rank has no link; util not computed"
	}
	return fmt.Sprintf("auto: each of the %d ranks sends %s to its right neighbour while receiving from its left, all at once, on %s; at least %d timed iterations and %v after %d warm-up, repeated: %s",
		r.comm.Size(), units.FormatSize(probeSize(r.comm.Size())), r.plan.Backend, probeIters, probeMinTime, probeWarmup, describeLink(r.linkFig))
}

// broadcastFloats sends rank 0's v to every rank.
func (r *rankRunner) broadcastFloats(ctx context.Context, v []float64) ([]float64, error) {
	return r.ctl().BroadcastFloats(ctx, v)
}
