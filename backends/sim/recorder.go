package sim

import (
	"context"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// recorder is a rank's Transport while RunWorld records its program
// (one rank after another): it notes each request and each wait, and
// every wait returns at once (no payload: nothing is moved, nothing
// received is read).
type recorder struct {
	f      *fabric
	w      *records
	rank   int
	failed bool
	// slab holds the requests handed out, a chunk at a time.
	slab []recorded
	// checking is set while the recorder checks a rank's program
	// against a recorded one (periodic.go) instead of recording it.
	checking
}

// Rank implements backends.Transport.
func (c *recorder) Rank() int { return c.rank }

// Size implements backends.Transport.
func (c *recorder) Size() int { return c.f.size }

// Close implements backends.Transport.
func (c *recorder) Close() error { return nil }

// Copied implements backends.LocalWorker as the endpoint does.
func (c *recorder) Copied(n int) { c.work(bytesAt(n, c.f.links.CopyGBps)) }

// Reduced implements backends.LocalWorker as the endpoint does.
func (c *recorder) Reduced(n int) { c.work(c.f.reduceTime(n)) }

// work records d of the rank's own time.
func (c *recorder) work(d time.Duration) { c.note(op{kind: opWork, d: d}) }

// note records o, or where the recorder checks a program, compares it.
func (c *recorder) note(o op) {
	if c.check != nil {
		c.expect(o)
		return
	}
	c.w.ops = append(c.w.ops, o)
}

// Send implements backends.Transport.
func (c *recorder) Send(peer int, buf []byte) backends.Request {
	return c.post(replayReq{send: true, peer: int32(peer), n: len(buf)})
}

// Recv implements backends.Transport.
func (c *recorder) Recv(peer int, buf []byte) backends.Request {
	return c.post(replayReq{peer: int32(peer), n: len(buf)})
}

// RecvReduce implements backends.Transport: the reduction costs what the
// endpoint's does.
func (c *recorder) RecvReduce(peer int, dst, acc []byte, _ dtype.ReduceFunc) backends.Request {
	if len(acc) < len(dst) {
		return c.fail()
	}
	return c.post(replayReq{peer: int32(peer), n: len(dst), reduces: true})
}

// post records a request, or fails it where shm would fail it at once (a
// peer out of the world, or the rank itself) or the budget is spent.
func (c *recorder) post(q replayReq) backends.Request {
	if c.check != nil {
		return c.verify(q)
	}
	if q.peer < 0 || int(q.peer) >= c.f.size || int(q.peer) == c.rank || len(c.w.reqs) >= replayBudget {
		return c.fail()
	}
	i := int32(len(c.w.reqs))
	c.w.reqs = append(c.w.reqs, q)
	c.w.ops = append(c.w.ops, op{kind: opPost, req: i})
	if len(c.slab) == 0 {
		c.slab = make([]recorded, 1024)
	}
	r := &c.slab[0]
	c.slab = c.slab[1:]
	r.c, r.i = c, i
	return r
}

// fail notes that the program cannot be replayed.
func (c *recorder) fail() backends.Request {
	c.failed = true
	return failed{errReplay}
}

// recorded is a request the recorder noted.
type recorded struct {
	c *recorder
	i int32
}

// Wait implements backends.Request: the wait is recorded, and returns.
func (q *recorded) Wait(context.Context) error {
	q.c.note(op{kind: opWait, req: q.i})
	return nil
}

// Ready implements backends.Readier: no wait of the recorder waits.
func (q *recorded) Ready() bool { return true }
