package coll

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// waitClock wraps a Transport so that the time a rank spends in
// Request.Wait, waiting for its peers, adds up in waited. What a call takes
// beyond that is the rank's own work (and, on backends whose receiver moves
// the bytes inside Wait, less than all of it): the rank with the most is the
// one the others waited for.
type waitClock struct {
	backends.Transport
	waited time.Duration
}

func (w *waitClock) Send(peer int, buf []byte) backends.Request {
	return timedRequest{w.Transport.Send(peer, buf), &w.waited}
}

func (w *waitClock) Recv(peer int, buf []byte) backends.Request {
	return timedRequest{w.Transport.Recv(peer, buf), &w.waited}
}

func (w *waitClock) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	return timedRequest{w.Transport.RecvReduce(peer, dst, acc, reduce), &w.waited}
}

// timedRequest adds the time its Wait takes to a rank's total.
type timedRequest struct {
	backends.Request
	total *time.Duration
}

func (r timedRequest) Wait(ctx context.Context) error {
	start := time.Now()
	err := r.Request.Wait(ctx)
	*r.total += time.Since(start)
	return err
}

// Waited returns the time this rank has spent waiting on its messages, in
// all calls so far. A Comm is used by one goroutine, which also waits on
// all its requests, so the total needs no lock.
func (c *Comm) Waited() time.Duration { return c.clock.waited }
