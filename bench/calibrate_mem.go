package bench

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/units"
)

// Constants from memory. calibrate measures beta on a ring step of
// calLarge bytes and gamma on calReduce bytes, buffers that stay in the
// caches; a row of 64 MiB runs from memory, here at about half those
// rates, and an algorithm that piles its reductions on one rank (the
// double binary tree's root on 2 ranks reduces the whole vector) is then
// modelled twice too fast. When the sweep has rows of at least calMemMin
// bytes, calibrateMemory measures both again on buffers of the largest
// row's size (at most calMem), and a row's model takes per-byte costs
// between the two: the cached ones up to calLarge, the memory ones from
// the size measured, and in between interpolated on a log scale of the
// row's size.
const (
	calMemMin    = 16 << 20
	calMem       = 64 << 20
	calMemIters  = 3
	calMemWarmup = 1
)

// calibrateMemory adds to c the constants measured from memory, when the
// sweep's buffers (already allocated) are large enough; it leaves c as it
// is otherwise. Every rank takes part, as in calibrate.
func (r *rankRunner) calibrateMemory(ctx context.Context, c *estimate.Calibration) error {
	size := int64(min(len(r.bufs.A), len(r.bufs.B), calMem))
	if r.plan.NoPayload || r.plan.largestSize() < calMemMin || size < calMemMin {
		return nil
	}
	gamma, err := r.slowestReduce(ctx, c.DTypes, r.bufs.A[:size], r.bufs.B[:size])
	if err != nil {
		return err
	}
	t, err := r.timeProbe(ctx, r.bufs, Row{Op: coll.SendRecv, DType: dtype.Uint8, Root: -1, Place: OutOfPlace,
		Count: int(size), Bytes: size}, coll.Auto, calMemWarmup, calMemIters)
	if err != nil {
		return fmt.Errorf("timing a %s step: %w", units.FormatSize(size), err)
	}
	fit := make([]float64, 1+len(c.DTypes))
	if r.comm.Rank() == 0 {
		// Never faster than the cached figures: a noisy probe must not
		// make large rows look cheaper than small ones.
		fit[0] = max(c.Base.Beta, (t-c.Base.Alpha)/float64(size))
		for i, dt := range c.DTypes {
			fit[1+i] = max(gamma[i], c.Gamma[dt])
		}
	}
	if fit, err = r.broadcastFloats(ctx, fit); err != nil {
		return err
	}
	c.Mem = &estimate.MemConstants{Bytes: size, Beta: fit[0], Gamma: map[dtype.DType]float64{}}
	for i, dt := range c.DTypes {
		c.Mem.Gamma[dt] = fit[1+i]
	}
	return nil
}
