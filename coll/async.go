package coll

import (
	"context"

	"github.com/hccl-test/hccl-test/backends"
)

// Pending is a collective started without blocking (Comm.Start).
type Pending struct {
	done chan struct{}
	algo string
	err  error
}

// Start begins a collective like Run and returns at once, so that the
// caller can compute while the collective moves its data; Wait ends it.
// Until Wait has returned, the collective owns the Comm and a's buffers:
// the caller must not run another collective on the Comm, nor touch a's
// buffers. ctx bounds the collective itself, as it bounds Run.
func (c *Comm) Start(ctx context.Context, name string, a *Args) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.algo, p.err = c.Run(ctx, name, a)
	}()
	return p
}

// Wait blocks until the collective has finished, and returns the
// algorithm that ran and its error, as Run does. If ctx ends first, Wait
// returns ctx's error at once; the collective then still owns the Comm and
// the buffers until it ends, which its own context decides. Calling Wait
// again returns the same result.
func (p *Pending) Wait(ctx context.Context) (string, error) {
	select {
	case <-p.done:
		return p.algo, p.err
	default:
	}
	select {
	case <-p.done:
		return p.algo, p.err
	case <-ctx.Done():
		return "", backends.ContextError(ctx)
	}
}

// Done returns a channel that is closed once the collective has finished.
func (p *Pending) Done() <-chan struct{} { return p.done }
