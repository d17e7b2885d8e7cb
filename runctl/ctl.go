package runctl

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// Ctl is one rank's control channel: the harness's own calls on the world
// (a barrier between phases, gathering timings at rank 0, broadcasting
// fitted constants, combining figures on every rank), apart from the
// measured ops, each call within Timeout. Both harnesses use one: the
// sweep over the world's Comm with faults suspended and payload on for
// the call (Quiet), a scenario over a Comm of its own without faults.
type Ctl struct {
	Comm    *coll.Comm
	Timeout time.Duration // limit of each call
	// Quiet, when set, is called before each call and its result after
	// it: it turns off what must not act on the harness's own calls.
	Quiet func() (restore func())
	// Shared, when set, serves the calls in memory instead of as
	// collectives on Comm (backends.Rendezvous: sim, whose ranks all
	// run in this process): no message, no virtual time, and a sweep of
	// thousands of simulated ranks does not spend its time on its own
	// barriers. It must span Comm's ranks, numbered as Comm numbers
	// them: set it only on the world's Comm (SharedOf).
	Shared backends.Rendezvous
}

// The control channel's algorithms are fixed, not auto's choice: the cost
// model may be uncalibrated when the first call runs, or calibrated for the
// measured ops' sizes and backend, and the harness's own calls must cost
// and combine the same whatever auto or a --algo list would pick. Each call
// moves a few floats, where latency is all, so each algorithm takes the
// fewest rounds, log2(n), on any number of ranks:
//   - a gather and a broadcast: the binomial tree ("tree"), MPI's choice
//     for small messages; rank 0 is its root, which both calls want;
//   - an allreduce: recursive doubling ("rd"): every rank ends with the
//     same bits, since each pair combines the same two values and IEEE
//     addition, max and min commute;
//   - a barrier: the Comm's own, dissemination (coll.Comm.Barrier).
//
// The sweep on sim makes these calls in memory (Shared), so its figures do
// not depend on them. Auto had picked the same for worlds of 4 and from 8
// ranks on sim's default links; on 2, 3 and 5 it picked ring and oneshot,
// which leave no rank behind the others where rd's fold on a world that is
// no power of two does: a scenario's probe on 3 simulated ranks, which
// starts from the skew of the call before it, reads its beta 2% lower.
var ctlAlgo = map[coll.Op]string{
	coll.Gather:    "tree",
	coll.Broadcast: "tree",
	coll.AllReduce: "rd",
}

// SharedOf returns what serves a control channel on the world's Comm in
// memory, nil when its transport (or one it wraps) has no rendezvous.
func SharedOf(world *coll.Comm) backends.Rendezvous {
	if s, ok := backends.RendezvousOf(world.Transport()); ok {
		return s
	}
	return nil
}

// timedRendezvous is a rendezvous that bounds each rank's wait itself
// (sim's MeetWithin): as a context.WithTimeout of limit per call would,
// without a timer and a context per rank and call.
type timedRendezvous interface {
	MeetWithin(ctx context.Context, limit time.Duration, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error)
}

// meet is a call served by c.Shared within c.Timeout: every rank's v met
// in memory and combined once.
func (c Ctl) meet(ctx context.Context, v []float64, combine func(all [][]float64) ([]float64, error)) ([]float64, error) {
	if t, ok := c.Shared.(timedRendezvous); ok && c.Timeout > 0 {
		return t.MeetWithin(ctx, c.Timeout, v, combine)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	return c.Shared.Meet(ctx, v, combine)
}

// run makes one call as a collective on c.Comm within c.Timeout with the
// call's fixed algorithm (ctlAlgo), a barrier for a nil a, and returns the
// algorithm that ran.
func (c Ctl) run(ctx context.Context, a *coll.Args) (string, error) {
	if c.Quiet != nil {
		defer c.Quiet()()
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if a == nil {
		return "dissemination", c.Comm.Barrier(ctx)
	}
	return c.Comm.Run(ctx, ctlAlgo[a.Op], a)
}

// Barrier synchronises the ranks.
func (c Ctl) Barrier(ctx context.Context) error {
	if c.Shared != nil {
		_, err := c.meet(ctx, nil, func([][]float64) ([]float64, error) { return nil, nil })
		return err
	}
	_, err := c.run(ctx, nil)
	return err
}

// GatherFloats gathers every rank's vector (all of the same length) at rank
// 0, rank-major; other ranks get nil.
func (c Ctl) GatherFloats(ctx context.Context, v []float64) ([]float64, error) {
	if c.Shared != nil {
		all, err := c.meet(ctx, v, gatherAll)
		if err != nil || c.Comm.Rank() != 0 {
			return nil, err
		}
		return all, nil // made for this call, and read by rank 0 alone
	}
	send := make([]byte, 8*len(v))
	putFloats(send, v)
	var recv []byte
	if c.Comm.Rank() == 0 {
		recv = make([]byte, c.Comm.Size()*len(send))
	}
	if _, err := c.run(ctx, &coll.Args{
		Op: coll.Gather, DType: dtype.FP64, Count: len(v), Root: 0, Send: send, Recv: recv,
	}); err != nil {
		return nil, err
	}
	if recv == nil {
		return nil, nil
	}
	return getFloats(recv), nil
}

// BroadcastFloats sends rank 0's v to every rank.
func (c Ctl) BroadcastFloats(ctx context.Context, v []float64) ([]float64, error) {
	if c.Shared != nil {
		out, err := c.meet(ctx, v, func(all [][]float64) ([]float64, error) {
			if err := sameLengths(all); err != nil {
				return nil, err
			}
			return all[0], nil
		})
		return slices.Clone(out), err
	}
	buf := make([]byte, 8*len(v))
	putFloats(buf, v)
	if _, err := c.run(ctx, &coll.Args{
		Op: coll.Broadcast, DType: dtype.FP64, Count: len(v), Root: 0, Send: buf, Recv: buf,
	}); err != nil {
		return nil, err
	}
	return getFloats(buf), nil
}

// AllReduceFloats combines every rank's v element by element with op and
// returns the result, the same on every rank.
func (c Ctl) AllReduceFloats(ctx context.Context, op dtype.ReduceOp, v []float64) ([]float64, error) {
	if c.Shared != nil {
		out, err := c.meet(ctx, v, func(all [][]float64) ([]float64, error) { return reduceAll(op, all) })
		return slices.Clone(out), err
	}
	send := make([]byte, 8*len(v))
	putFloats(send, v)
	recv := make([]byte, len(send))
	if _, err := c.run(ctx, &coll.Args{
		Op: coll.AllReduce, DType: dtype.FP64, RedOp: op, Count: len(v), Send: send, Recv: recv,
	}); err != nil {
		return nil, err
	}
	return getFloats(recv), nil
}

// putFloats encodes v into buf, 8 bytes each, little-endian.
func putFloats(buf []byte, v []float64) {
	for i, x := range v {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
	}
}

// getFloats decodes buf, 8 bytes per float64, little-endian.
func getFloats(buf []byte) []float64 {
	out := make([]float64, len(buf)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	return out
}

// sameLengths checks that every rank gave as many values as rank 0.
func sameLengths(all [][]float64) error {
	for r, v := range all {
		if len(v) != len(all[0]) {
			return fmt.Errorf("harness call in memory: rank %d gave %d values, rank 0 %d", r, len(v), len(all[0]))
		}
	}
	return nil
}

// gatherAll is every rank's values, rank-major.
func gatherAll(all [][]float64) ([]float64, error) {
	if err := sameLengths(all); err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(all)*len(all[0]))
	for _, v := range all {
		out = append(out, v...)
	}
	return out, nil
}

// reduceAll combines every rank's values element by element with op, in
// rank order, with the reduction the collective applies to fp64 (an avg
// divides the sum by the ranks).
func reduceAll(op dtype.ReduceOp, all [][]float64) ([]float64, error) {
	if err := sameLengths(all); err != nil {
		return nil, err
	}
	if op == dtype.MulSum {
		return nil, fmt.Errorf("harness call in memory: %v is no reduction of the harness's figures", op)
	}
	acc := make([]byte, 8*len(all[0]))
	putFloats(acc, all[0])
	if len(all) > 1 {
		red := dtype.Reducer(dtype.FP64, op)
		b := make([]byte, len(acc))
		for _, v := range all[1:] {
			putFloats(b, v)
			red(acc, acc, b)
		}
	}
	if op == dtype.Avg {
		dtype.DivideBy(dtype.FP64, acc, len(all))
	}
	return getFloats(acc), nil
}
