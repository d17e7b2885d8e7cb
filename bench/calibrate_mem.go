package bench

import (
	"context"
	"fmt"
	"math"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
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

// memConstants are beta and gamma measured on buffers of bytes bytes.
type memConstants struct {
	bytes int64
	beta  float64
	gamma map[dtype.DType]float64
}

// calibrateMemory adds to c the constants measured from memory, when the
// sweep's buffers (already allocated) are large enough; it leaves c as it
// is otherwise. Every rank takes part, as in calibrate.
func (r *rankRunner) calibrateMemory(ctx context.Context, c *calibration) error {
	size := int64(min(len(r.bufs.a), len(r.bufs.b), calMem))
	if r.plan.NoPayload || r.plan.MaxBytes < calMemMin || size < calMemMin {
		return nil
	}
	gamma, err := r.slowestReduce(ctx, c.dtypes, r.bufs.a[:size], r.bufs.b[:size])
	if err != nil {
		return err
	}
	t, err := r.timeProbe(ctx, r.bufs, Row{Op: coll.SendRecv, DType: dtype.Uint8, Root: -1, Place: OutOfPlace,
		Count: int(size), Bytes: size}, coll.Auto, calMemWarmup, calMemIters)
	if err != nil {
		return fmt.Errorf("timing a %s step: %w", units.FormatSize(size), err)
	}
	fit := make([]float64, 1+len(c.dtypes))
	if r.comm.Rank() == 0 {
		// Never faster than the cached figures: a noisy probe must not
		// make large rows look cheaper than small ones.
		fit[0] = max(c.base.Beta, (t-c.base.Alpha)/float64(size))
		for i, dt := range c.dtypes {
			fit[1+i] = max(gamma[i], c.gamma[dt])
		}
	}
	if fit, err = r.broadcastFloats(ctx, fit); err != nil {
		return err
	}
	c.mem = &memConstants{bytes: size, beta: fit[0], gamma: map[dtype.DType]float64{}}
	for i, dt := range c.dtypes {
		c.mem.gamma[dt] = fit[1+i]
	}
	return nil
}

// memShare is how much of the memory constants a row of bytes bytes
// takes: 0 up to calLarge, 1 from at, and in between the position of its
// size between the two on a log scale.
func memShare(bytes, at int64) float64 {
	switch {
	case bytes <= calLarge:
		return 0
	case bytes >= at:
		return 1
	}
	return math.Log(float64(bytes)/calLarge) / math.Log(float64(at)/calLarge)
}

// lerp returns x moved share of the way to y.
func lerp(x, y, share float64) float64 { return x + (y-x)*share }
