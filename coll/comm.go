package coll

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/ticks"
)

// Comm is one rank's handle for running collectives over a Transport. It
// owns the scratch memory algorithms need, so that memory is allocated once
// and reused across calls. A Comm is used by one goroutine at a time.
type Comm struct {
	t          backends.Transport
	rel        backends.Releaser // t, when it reuses its requests
	waited     ticks.Ticks       // time spent in waitAll
	received   time.Duration     // variable-size calls' time to their last receive (Received)
	live       live              // what the rank is doing now, for Status
	rank, size int
	scratch    []byte
	scratchMem *scratchMem // the memory scratch is mapped in, once it is
	preMul     []byte      // MulSum's multiplied input (mulsum.go), in scratchMem
	preMulArgs Args        // the Sum call a MulSum call runs as (mulsum.go)
	saved      []byte      // the input of an in-place call, kept for a re-run
	retry      Retry       // re-execution policy (SetRetry)
	reruns     int         // calls run again so far
	calls      uint64      // collective calls made so far, barriers included
	model      Model       // what auto chooses with
	// lastPick is the latest pick on this Comm (auto's, or a named
	// algorithm checked for the call) and what it was for: a row calls
	// the same shape over and over, and finds it here without the lock of
	// the process's shared picks or the registry's map (Choose).
	// The model is not in the key: setModel forgets the pick instead,
	// where comparing the model on every call was a tenth of its cost.
	lastPick struct {
		key  pickKey
		algo string
	}
	// lastReduce is the reductions of the latest call that reduced in
	// rank order (reducers).
	lastReduce struct {
		dt              dtype.DType
		op              dtype.ReduceOp
		reduce, inFirst dtype.ReduceFunc
	}
	// lastAlg is the algorithm the latest call ran (runOnce): a row runs
	// the same one over and over, and finds it here without the registry's
	// map and names.
	lastAlg *algorithm
	// noPayload makes calls carry lengths only (SetNoPayload).
	noPayload bool
	// clock is the transport's virtual clock (backends.ClockOf), nil in
	// wall time; tagger is the transport as a backends.CallTagger, nil if
	// it is not one. Both are found once, not on every call.
	clock  backends.Clock
	tagger backends.CallTagger
	// work charges the rank's own copies and reductions to a virtual
	// clock (sim); nil on backends that run in wall time.
	work backends.LocalWorker

	// topo is the servers the ranks sit on (SetTopology), with the
	// sub-communicators of its levels.
	topo topology
	// parent is, for a sub-communicator of a level of the topology, the
	// Comm whose calls it runs steps of; nil for a top-level Comm.
	parent *Comm
}

// barrierCode is the op code that tags a barrier's messages.
const barrierCode = 0x7f

// callNames names this package's op codes and dtype's codes in the
// transports' errors (backends.Call.Names).
type callNames struct{}

// NameOp names an op and data type, as "allreduce(fp32)".
func (callNames) NameOp(op, dt uint8) string {
	if op == barrierCode {
		return "barrier"
	}
	return fmt.Sprintf("%v(%v)", Op(op), dtype.DType(dt))
}

// NameCall names a call with its arguments, as "allgather(fp32, 1048576)".
func (callNames) NameCall(c backends.Call) string {
	if c.Op == barrierCode {
		return "barrier"
	}
	s := fmt.Sprintf("%v(%v, %d", Op(c.Op), dtype.DType(c.DType), c.Count)
	if d := Op(c.Op).Desc(); d != nil && d.Variable() {
		// The count of a variable-size call is its counts' digest.
		s = fmt.Sprintf("%v(%v, counts #%012x", Op(c.Op), dtype.DType(c.DType), c.Count)
	}
	if c.RedOp != 0 {
		s += ", " + dtype.ReduceOp(c.RedOp).String()
	}
	if c.Root >= 0 {
		s += fmt.Sprintf(", root %d", c.Root)
	}
	if c.NoPayload {
		s += ", no payload"
	}
	return s + ")"
}

// beginCall numbers a new call and tells a tagging transport about it, so
// that the messages of ranks that disagree about the call are caught.
func (c *Comm) beginCall(call backends.Call) {
	c.calls++
	call.Seq = c.calls
	call.NoPayload = c.noPayload
	if c.tagger != nil {
		c.tagger.BeginCall(call)
	}
}

// signature returns the Call that a describes: every argument that all
// ranks must agree on, named by this package in errors.
func signature(a *Args) backends.Call {
	call := backends.Call{Op: uint8(a.Op), DType: uint8(a.DType), Count: int64(a.Count), Root: -1, Names: callNames{}}
	if a.Counts != nil {
		// Ranks that disagree on any count disagree on the call.
		call.Count = int64(a.Counts.Digest() >> 16)
	}
	if a.Op.Reduces() {
		call.RedOp = uint8(a.RedOp)
	}
	if a.Op.Rooted() {
		call.Root = int32(a.Root)
	}
	return call
}

// NewComm returns a Comm over t.
func NewComm(t backends.Transport) *Comm {
	work, _ := backends.LocalWorkerOf(t)
	rel, _ := t.(backends.Releaser)
	c := &Comm{t: t, rel: rel, rank: t.Rank(), size: t.Size(), model: DefaultModel, work: work}
	c.findClock()
	return c
}

// findClock notes what of its transport c asks on every call.
func (c *Comm) findClock() {
	c.clock, _ = backends.ClockOf(c.t)
	c.tagger, _ = c.t.(backends.CallTagger)
}

// Clock returns the virtual clock of c's transport (backends.ClockOf),
// found when c was made; false when c runs in wall time.
func (c *Comm) Clock() (backends.Clock, bool) { return c.clock, c.clock != nil }

// SetModel makes auto choose with m from now on. Every rank of a world must
// use the same model, or ranks could choose different algorithms for the
// same call. The Comm's topology decides m.PerServer: it is replaced by
// the one SetTopology set (0 when none), so that auto never costs a
// layout that hier would not run.
func (c *Comm) SetModel(m Model) {
	m.PerServer = c.topo.perServer
	c.setModel(m)
}

// setModel makes m the model, forgetting the latest pick if it changes.
func (c *Comm) setModel(m Model) {
	if m != c.model {
		c.model = m
		c.lastPick.algo = ""
	}
}

// Model returns the model auto chooses with.
func (c *Comm) Model() Model { return c.model }

// Rank returns this rank.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.size }

// Transport returns the transport the Comm runs over.
func (c *Comm) Transport() backends.Transport { return c.t }

// Reserve makes sure scratch space for collectives of up to maxBytes (a
// rank's larger buffer) is allocated now, and touched, rather than inside a
// timed call. Without payload (SetNoPayload) it takes the address space
// that stands in for it (noPayloadScratch), which nothing touches, and
// returns the error if that cannot be had. It stops with ctx's error once
// ctx is done (hugemem.Touch).
func (c *Comm) Reserve(ctx context.Context, maxBytes int) error {
	if !c.payload() {
		return reserveStandIn(&noPayloadScratch, 2*maxBytes, "scratch space")
	}
	return hugemem.Touch(ctx, c.scratchBuf(2*maxBytes))
}

// scratchBuf returns n bytes of scratch space, reusing earlier space when it
// is large enough. Its contents are undefined. There is one scratch area per
// Comm: a second call returns the same memory, so an algorithm that needs
// several regions asks once and slices. Without payload (SetNoPayload) it
// is address space that no memory backs, shared by every Comm of the
// process (noPayloadScratch), which no algorithm touches then.
//
// The memory is mapped outside the Go heap and advised for huge pages
// (internal/hugemem), as the harness's message buffers are: an algorithm
// that copies through its scratch space (Bruck's, hier's regrouping)
// would otherwise run at the speed of 4 KiB pages. Space it outgrows stays
// mapped (a slice of it may still be in use) until the Comm is collected.
func (c *Comm) scratchBuf(n int) []byte {
	if !c.payload() {
		return standIn(&noPayloadScratch, n)
	}
	if cap(c.scratch) < n {
		c.scratch = c.scratchMemory().grow(n)
	}
	return c.scratch[:n]
}

// scratchMemory returns the Comm's scratchMem, made on first use.
func (c *Comm) scratchMemory() *scratchMem {
	if c.scratchMem == nil {
		c.scratchMem = new(scratchMem)
		runtime.AddCleanup(c, (*scratchMem).release, c.scratchMem)
	}
	return c.scratchMem
}

// scratchMem holds the mappings of a Comm's scratch space, released
// together when the Comm is collected.
type scratchMem struct {
	mu    sync.Mutex // the cleanup runs on a goroutine of its own
	frees []func()
}

// grow maps n bytes more: huge-page memory, or the Go heap's if mapping
// fails.
func (m *scratchMem) grow(n int) []byte {
	b, free, err := hugemem.Alloc(n)
	if err != nil {
		return make([]byte, n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frees = append(m.frees, free)
	return b
}

// release unmaps every mapping.
func (m *scratchMem) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, free := range m.frees {
		free()
	}
	m.frees = nil
}

// exchange sends sbuf to rank `to` while receiving rbuf from rank `from`.
func (c *Comm) exchange(ctx context.Context, to int, sbuf []byte, from int, rbuf []byte) error {
	s := c.t.Send(to, sbuf)
	r := c.t.Recv(from, rbuf)
	return c.waitAll(ctx, r, s)
}

// exchangeReduce sends sbuf to rank `to` while receiving from rank `from`
// and combining: dst = reduce(acc, incoming).
func (c *Comm) exchangeReduce(ctx context.Context, to int, sbuf []byte, from int, dst, acc []byte, reduce dtype.ReduceFunc) error {
	s := c.t.Send(to, sbuf)
	r := c.t.RecvReduce(from, dst, acc, reduce)
	return c.waitAll(ctx, r, s)
}

// send sends buf to peer and waits for it to be taken.
func (c *Comm) send(ctx context.Context, peer int, buf []byte) error {
	return c.waitAll(ctx, c.t.Send(peer, buf))
}

// recv receives buf from peer.
func (c *Comm) recv(ctx context.Context, peer int, buf []byte) error {
	return c.waitAll(ctx, c.t.Recv(peer, buf))
}

// recvReduce receives from peer and combines: dst = reduce(acc, incoming).
func (c *Comm) recvReduce(ctx context.Context, peer int, dst, acc []byte, reduce dtype.ReduceFunc) error {
	return c.waitAll(ctx, c.t.RecvReduce(peer, dst, acc, reduce))
}

// waitAll waits for every request, even after one fails, and returns the
// first error. The time it takes adds to the rank's waiting time (Waited).
// Every algorithm waits through it.
//
// A sub-communicator's waits count as its top-level Comm's (top), whose
// call they are part of.
func (c *Comm) waitAll(ctx context.Context, reqs ...backends.Request) error {
	top := c.top()
	// A wait on requests that are all ready takes no time worth a
	// reading of the clock: more than an eager send's whole wait. The
	// clock is ticks', a tenth of the monotonic clock's cost and without
	// its fence.
	timed := !allReady(reqs)
	var start ticks.Ticks
	if timed {
		start = ticks.Now()
		top.live.waiting(start, reqs)
		defer top.live.waited()
	}
	var first error
	var stuck []string // what was still pending when the context ended
	for _, r := range reqs {
		err := r.Wait(ctx)
		if err == nil {
			continue
		}
		// The first failure, except that a failure of the request's own
		// (a mismatch, a lost link) beats a cancellation met earlier:
		// it says why, and decides how re-execution votes.
		if first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled) {
			first = err
		}
		if ctx.Err() != nil {
			if d, ok := r.(backends.Describer); ok {
				stuck = append(stuck, d.Describe())
			}
		}
	}
	if timed {
		top.waited += ticks.Now() - start
	}
	if c.rel != nil {
		// Every request is done with: waitAll is the only place a
		// request is waited on, once.
		for _, r := range reqs {
			c.rel.Release(r)
		}
	}
	if len(stuck) > 0 {
		return &StuckError{Pending: stuck, Err: first}
	}
	return first
}

// allReady reports whether every request says it is ready
// (backends.Readier), so that waiting on them will not wait for a peer.
func allReady(reqs []backends.Request) bool {
	for _, r := range reqs {
		if rd, ok := r.(backends.Readier); !ok || !rd.Ready() {
			return false
		}
	}
	return true
}

// Waited returns the time this rank has spent waiting on its messages, in
// all calls so far. What a call takes beyond that is the rank's own work
// (and, on backends whose receiver moves the bytes inside Wait, less than
// all of it): the rank with the most is the one the others waited for.
func (c *Comm) Waited() time.Duration { return c.waited.Duration() }

// Barrier returns once every rank has entered it (dissemination barrier:
// ceil(log2 n) rounds of zero-byte messages). With a retry policy set
// (SetRetry), a barrier that fails on a transport error is run again.
func (c *Comm) Barrier(ctx context.Context) error {
	if c.retry.Max > 0 && c.size > 1 {
		_, err := c.retrying(ctx, nil, func(actx context.Context) (string, error) {
			return "dissemination", c.barrierOnce(actx)
		})
		return err
	}
	return c.barrierOnce(ctx)
}

// barrierOnce is one attempt at a barrier.
func (c *Comm) barrierOnce(ctx context.Context) error {
	c.beginCall(backends.Call{Op: barrierCode, Root: -1, Names: callNames{}})
	c.live.begin(c.calls, nil, &barrierAlgo)
	defer c.live.end()
	for dist := 1; dist < c.size; dist *= 2 {
		to := (c.rank + dist) % c.size
		from := (c.rank - dist + c.size) % c.size
		if err := c.exchange(ctx, to, nil, from, nil); err != nil {
			return &CallError{Rank: c.rank, Seq: c.calls, Call: "barrier", Algo: "dissemination",
				Err: fmt.Errorf("round with ranks %d and %d: %w", to, from, err)}
		}
	}
	return nil
}
