package coll

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
)

// Native is the algorithm name that hands a call whole to the backend's own
// collectives (MPI's, on the mpi backend). Only transports that implement
// backends.Native serve it; auto never picks it.
const Native = "native"

// runNative runs a through the transport's own collectives.
func runNative(ctx context.Context, c *Comm, a *Args) error {
	nt, ok := c.t.(backends.Native)
	if !ok {
		return fmt.Errorf("algorithm %q needs a backend with collectives of its own (the mpi backend)", Native)
	}
	d := a.Op.Desc()
	return nt.RunNative(ctx, backends.NativeCall{
		Op: a.Op.String(), DType: a.DType, RedOp: a.RedOp,
		Count: a.Count, Root: a.Root, Send: a.Send, Recv: a.Recv,
		Reduces: d.Reduces, Rooted: d.Rooted, InPlace: d.InPlaceCall(a, c.rank, c.size),
	})
}
