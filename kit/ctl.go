package kit

import (
	"context"
	"encoding/binary"
	"math"
	"time"

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
}

func (c Ctl) run(ctx context.Context, a *coll.Args) error {
	if c.Quiet != nil {
		defer c.Quiet()()
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if a == nil {
		return c.Comm.Barrier(ctx)
	}
	_, err := c.Comm.Run(ctx, coll.Auto, a)
	return err
}

// Barrier synchronises the ranks.
func (c Ctl) Barrier(ctx context.Context) error { return c.run(ctx, nil) }

// GatherFloats gathers every rank's vector (all of the same length) at rank
// 0, rank-major; other ranks get nil.
func (c Ctl) GatherFloats(ctx context.Context, v []float64) ([]float64, error) {
	send := make([]byte, 8*len(v))
	putFloats(send, v)
	var recv []byte
	if c.Comm.Rank() == 0 {
		recv = make([]byte, c.Comm.Size()*len(send))
	}
	if err := c.run(ctx, &coll.Args{
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
	buf := make([]byte, 8*len(v))
	putFloats(buf, v)
	if err := c.run(ctx, &coll.Args{
		Op: coll.Broadcast, DType: dtype.FP64, Count: len(v), Root: 0, Send: buf, Recv: buf,
	}); err != nil {
		return nil, err
	}
	return getFloats(buf), nil
}

// AllReduceFloats combines every rank's v element by element with op and
// returns the result, the same on every rank.
func (c Ctl) AllReduceFloats(ctx context.Context, op dtype.ReduceOp, v []float64) ([]float64, error) {
	send := make([]byte, 8*len(v))
	putFloats(send, v)
	recv := make([]byte, len(send))
	if err := c.run(ctx, &coll.Args{
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
