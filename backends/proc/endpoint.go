package proc

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// endpoint is one rank's Transport: messages to the ranks of its host go
// through shared memory, the others through t, the rank's tcp transport,
// which also carries the ranks' agreement on failed calls.
type endpoint struct {
	t          backends.Transport
	rank, size int
	hosts      []string // every rank's host, from the rendezvous
	local      []int    // the ranks of this host, ascending
	localIdx   []int    // by rank: its index in local, -1 on another host
	me         int      // this rank's index in local
	own        *segment // this rank's control segment
	my         ctl      // its mapping
	peers      []*peer  // by rank; nil for this rank and other hosts'
	call       backends.Call
	spin       bool // poll before sleeping: no more ranks here than CPUs
	// sameCPUWaits counts the waits that slept without polling, their
	// peer having last waited on this rank's CPU.
	sameCPUWaits int
	// yieldOffUntil: until then an oversubscribed rank's waits sleep at
	// once, without yielding; set when a yield came back slowly
	// (yieldWait). slowYields counts those yields.
	yieldOffUntil time.Time
	slowYields    int
	// yield and now are yieldCPU and time.Now, which tests replace.
	yield     func()
	now       func() time.Time
	stage     stagePool
	pool      reqPool // released requests, for reuse
	queued    int     // sends waiting in peers' queues
	receiving int     // receives posted and not yet complete (peers' recvs)
	closed    bool
	// dropMu guards the peers' dropErr, which DropLink may set from
	// another goroutine.
	dropMu sync.Mutex
}

// newEndpoint wraps the tcp transport t of one rank, setting up shared
// memory with the ranks of its host.
func newEndpoint(ctx context.Context, t backends.Transport) (*endpoint, error) {
	e := &endpoint{t: t, rank: t.Rank(), size: t.Size()}
	hosts, ok := backends.HostsOf(t)
	if !ok || len(hosts) != e.size {
		hosts = make([]string, e.size) // one host
	}
	e.hosts = hosts
	if err := e.setupLocal(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Rank implements backends.Transport.
func (e *endpoint) Rank() int { return e.rank }

// Size implements backends.Transport.
func (e *endpoint) Size() int { return e.size }

// Hosts implements backends.HostReporter.
func (e *endpoint) Hosts() []string { return e.hosts }

// ReadsSenderBuffer implements backends.DirectReader: when every rank
// shares this host, a receiver copies or reduces straight out of the
// sender's buffer.
func (e *endpoint) ReadsSenderBuffer() bool { return len(e.local) == e.size }

// BeginCall implements backends.CallTagger, for both kinds of link.
func (e *endpoint) BeginCall(c backends.Call) {
	e.call = c
	if ct, ok := e.t.(backends.CallTagger); ok {
		ct.BeginCall(c)
	}
}

// peer returns the peer of this host that rank is, nil for another
// host's, or an error for a rank that cannot be messaged.
func (e *endpoint) peer(rank int) (*peer, error) {
	switch {
	case e.closed:
		return nil, backends.ErrClosed
	case rank < 0 || rank >= e.size:
		return nil, fmt.Errorf("peer %d out of range [0, %d)", rank, e.size)
	case rank == e.rank:
		return nil, fmt.Errorf("rank %d cannot message itself", rank)
	}
	return e.peers[rank], nil
}

// Send implements backends.Transport.
func (e *endpoint) Send(peer int, buf []byte) backends.Request {
	p, err := e.peer(peer)
	if err != nil {
		return failed{fmt.Errorf("send to rank %d: %w", peer, err)}
	}
	if p == nil {
		return e.t.Send(peer, buf)
	}
	return e.send(p, buf)
}

// Recv implements backends.Transport.
func (e *endpoint) Recv(peer int, buf []byte) backends.Request {
	return e.postRecv(peer, buf, nil, nil)
}

// RecvReduce implements backends.Transport.
func (e *endpoint) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if err := backends.CheckAccumulator(peer, dst, acc); err != nil {
		return failed{err}
	}
	return e.postRecv(peer, dst, acc, reduce)
}

func (e *endpoint) postRecv(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	p, err := e.peer(peer)
	if err != nil {
		return failed{fmt.Errorf("recv from rank %d: %w", peer, err)}
	}
	if p == nil {
		if reduce == nil {
			return e.t.Recv(peer, dst)
		}
		return e.t.RecvReduce(peer, dst, acc, reduce)
	}
	r := e.newRecv()
	*r = recvReq{e: e, p: p, ticket: p.nextRecv, dst: dst, acc: acc, reduce: reduce, call: e.call}
	p.nextRecv++
	p.recvs = append(p.recvs, r)
	e.receiving++
	return r
}

// Close implements backends.Transport: it tells the ranks of its host
// that it is gone, unmaps their memory, frees its own and closes the tcp
// transport.
func (e *endpoint) Close() error {
	e.closeWith(nil)
	return nil
}

// closeWith closes the endpoint, telling the ranks of this host why (err,
// nil for an orderly end).
func (e *endpoint) closeWith(why error) {
	if e.closed {
		return
	}
	e.closed = true
	if e.own != nil {
		if why != nil {
			e.my.putText(hdrWhy, headerSize, why.Error())
		}
		atomic.StoreUint32(e.my.u32(hdrClosed), 1)
		for _, p := range e.peers {
			if p != nil {
				p.ctl.bell().ring()
			}
		}
	}
	for _, p := range e.peers {
		if p != nil {
			e.failPending(p, backends.ErrClosed)
			p.release()
		}
	}
	e.stage.freeAll()
	if e.own != nil {
		e.own.free()
	}
	e.t.Close()
}

// failed is a request that failed when it was posted.
type failed struct{ err error }

func (f failed) Wait(context.Context) error { return f.err }

// spinBudget is how long a waiting rank polls before it sleeps on its
// doorbell, when its host has no more ranks than CPUs (as shm's).
const spinBudget = 20 * time.Microsecond

// quickPolls is how many times a waiting rank polls, without yielding or
// reading the clock, before it asks which CPU it runs on (getcpu(2), a
// system call: 400 ns on a loaded virtual machine, as long as a whole
// small allreduce) and polls yielding: a peer on another CPU mostly
// answers within that (2 ranks, 1 KiB allreduce, ranks pinned to two
// CPUs: median iteration 1.55 to 1.30 us, p=0.04). A peer on this CPU
// costs it a microsecond or two of polling before the sleep.
const quickPolls = 256

// sleepSlice bounds one sleep on the doorbell, so that a wait notices its
// deadline and a peer's death without being rung.
const sleepSlice = 20 * time.Millisecond

// await waits until ready reports true, ctx ends (its error), or p is
// gone (an error wrapping ErrPeerGone). It flushes the queued sends of
// this rank while it waits, since a peer may wait for them.
func (e *endpoint) await(ctx context.Context, p *peer, ready func() bool) error {
	e.flush()
	if ready() {
		return nil
	}
	// A cancelled run (SIGTERM to this rank alone) stops at its next wait,
	// not at its next sleep: ranks whose peers answer within the polling
	// budget never sleep, and went on to the end of the sweep.
	select {
	case <-ctx.Done():
		return backends.ContextError(ctx)
	default:
	}
	e.progress()
	if e.spin && !p.sameProcess {
		for range quickPolls {
			if ready() {
				return nil
			}
		}
	}
	if e.spin {
		// Polling helps only while the peer runs on another CPU: one that
		// shares this CPU (the host's others busy with other work) can
		// answer only once this rank gives the CPU up, so polling would
		// add its whole budget to every hand-off (2 ranks sharing a CPU:
		// a 1 KiB allreduce in 70-90 us polling, 25-41 us sleeping at
		// once). The peer publishes the CPU of its last wait. (A peer in
		// this process, a goroutine, runs when this one yields its P:
		// polling serves it.)
		cpu := thisCPU()
		atomic.StoreUint32(e.my.u32(hdrCPU), cpu)
		theirs := p.ctl.u32(hdrCPU)
		if cpu != 0 && !p.sameProcess && atomic.LoadUint32(theirs) == cpu {
			e.sameCPUWaits++
		} else {
			start := time.Now()
			for i := 1; ; i++ {
				if ready() {
					return nil
				}
				if i%16 == 0 && (time.Since(start) > spinBudget || atomic.LoadUint32(theirs) == cpu) {
					break
				}
				runtime.Gosched()
			}
		}
	}
	if !e.spin && e.yieldWait(ready) {
		return nil
	}
	return e.sleepUntil(ctx, p, ready)
}

// sleepUntil is await's last stage: it sleeps on this rank's doorbell, a
// slice at a time, until ready reports true, ctx ends or p is gone. A peer
// found gone may have posted what ready waits for (or taken what it
// waited on) just before it closed, between ready's last look and this
// one: ready looks again before the peer's end counts. (8 ranks on 2 CPUs
// lost a row's timings so: a child's part of the gather was in, and its
// parent reported it gone.)
func (e *endpoint) sleepUntil(ctx context.Context, p *peer, ready func() bool) error {
	for {
		if ctx.Err() != nil {
			return backends.ContextError(ctx)
		}
		if err := p.gone(); err != nil {
			if ready() {
				return nil
			}
			return err
		}
		d := sleepSlice
		if dl, ok := ctx.Deadline(); ok {
			d = min(d, max(time.Until(dl), time.Microsecond))
		}
		e.my.bell().sleep(d, ready)
		e.flush()
		e.progress()
		if ready() {
			return nil
		}
	}
}

// stagePool holds the segments through which buffers outside shared
// memory are sent, by size class (powers of two from 64 KiB).
type stagePool struct {
	free map[int][]*segment
}

const minStage = 64 << 10

// get returns a staging segment of at least n bytes.
func (sp *stagePool) get(n int) (*segment, error) {
	class := minStage
	for class < n {
		class *= 2
	}
	if l := sp.free[class]; len(l) > 0 {
		s := l[len(l)-1]
		sp.free[class] = l[:len(l)-1]
		return s, nil
	}
	return newSegment(class, "hccl-test-stage")
}

// put returns s to the pool.
func (sp *stagePool) put(s *segment) {
	if sp.free == nil {
		sp.free = map[int][]*segment{}
	}
	sp.free[len(s.mem)] = append(sp.free[len(s.mem)], s)
}

// freeAll frees every segment in the pool.
func (sp *stagePool) freeAll() {
	for _, l := range sp.free {
		for _, s := range l {
			s.free()
		}
	}
	sp.free = nil
}
