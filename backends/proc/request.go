package proc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// sendReq is a send to a rank of this host: a slot of the ring to it that
// names the buffer (a segment and an offset) the receiver reads.
type sendReq struct {
	e       *endpoint
	p       *peer
	ticket  uint64
	buf     []byte
	seg     *segment // holds buf, or a copy of it (staged); nil when empty
	off     int
	staged  bool
	call    backends.Call
	queued  bool  // waits in p.queue for a free slot
	dropped error // set when a queued send is given up
	done    bool
	err     error
}

// send posts buf to p: straight from its segment when the harness
// allocated it in shared memory (hugemem's allocator), else from a copy in
// a staging segment.
func (e *endpoint) send(p *peer, buf []byte) backends.Request {
	s := e.newSend()
	*s = sendReq{e: e, p: p, buf: buf, call: e.call}
	if err := e.linkDropped(p); err != nil {
		s.finish(err)
		return s
	}
	if len(buf) > 0 && len(buf) <= eagerMax && len(p.queue) == 0 && !s.call.NoPayload && e.postEager(s) {
		return s
	}
	s.seg, s.off = findSegment(buf)
	if s.seg == nil && len(buf) > 0 {
		st, err := e.stage.get(len(buf))
		if err != nil {
			s.finish(err)
			return s
		}
		copy(st.mem, buf)
		s.seg, s.staged = st, true
	}
	s.ticket = p.nextSend
	p.nextSend++
	if len(p.queue) > 0 || !e.tryPost(s) {
		if len(p.queue) == 0 {
			e.wantDone(p, true)
		}
		s.queued = true
		p.queue = append(p.queue, s)
		e.queued++
	}
	return s
}

// wantDone tells p whether this rank waits for slots to free, so that it
// rings this rank's doorbell when it is done with an eager send's slot (it
// always does with the others', whose senders wait for them).
func (e *endpoint) wantDone(p *peer, want bool) {
	v := uint32(0)
	if want {
		v = 1
	}
	atomic.StoreUint32(e.my.u32(p.outRing+ringWantDone), v)
}

// tryPost writes s into its slot if the slot is free, and rings the
// receiver.
func (e *endpoint) tryPost(s *sendReq) bool {
	p := s.p
	off := slotAt(p.outRing, s.ticket)
	st := atomic.LoadUint64(e.my.u64(off + slotState))
	if s.ticket >= ringSlots {
		prev := s.ticket - ringSlots
		if st != state(prev, phaseDone) && st != state(prev, phaseAbandoned) {
			return false
		}
	}
	if old := p.inflight[s.ticket%ringSlots]; old != nil && !old.done {
		e.harvest(old)
	}
	phase := uint64(phasePosted)
	if s.dropped != nil {
		phase = phaseAbandoned // a queued send given up: its receiver must fail
	}
	if s.seg != nil {
		*e.my.u64(off + slotSegID) = s.seg.id
		*e.my.u64(off + slotSegFD) = uint64(s.seg.fd)
		*e.my.u64(off + slotSegSize) = uint64(s.seg.mapped())
	} else {
		*e.my.u64(off + slotSegID) = 0
	}
	*e.my.u64(off + slotOff) = uint64(s.off)
	*e.my.u64(off + slotLen) = uint64(len(s.buf))
	e.my.putCall(off+slotCall, s.call)
	atomic.StoreUint64(e.my.u64(off+slotState), state(s.ticket, phase))
	p.inflight[s.ticket%ringSlots] = s
	p.ctl.bell().ring()
	return true
}

// flush posts the queued sends whose slots have freed.
func (e *endpoint) flush() {
	if e.queued == 0 || e.closed {
		return
	}
	for _, p := range e.peers {
		for p != nil && len(p.queue) > 0 && e.tryPost(p.queue[0]) {
			p.queue[0].queued = false
			p.queue = p.queue[1:]
			e.queued--
			if len(p.queue) == 0 {
				e.wantDone(p, false)
			}
		}
	}
}

// harvest completes s from its slot, which the receiver marked done.
func (e *endpoint) harvest(s *sendReq) {
	off := slotAt(s.p.outRing, s.ticket)
	var err error
	switch atomic.LoadUint32(e.my.u32(off + slotStatus)) {
	case statusLength:
		err = fmt.Errorf("%w: rank %d sent %d bytes, rank %d expected %d",
			backends.ErrMismatch, e.rank, len(s.buf), s.p.rank, *e.my.u64(off + slotRecvLen))
	case statusCall:
		theirs := e.my.getCall(off+slotRecv, s.call.Names)
		err = fmt.Errorf("%w: rank %d called %v as op #%d while rank %d called %v as op #%d",
			backends.ErrMismatch, e.rank, s.call, s.call.Seq, s.p.rank, theirs, theirs.Seq)
	case statusFailed:
		err = fmt.Errorf("%w: rank %d could not read the buffer", backends.ErrPeerGone, s.p.rank)
	}
	if err != nil {
		err = fmt.Errorf("send to rank %d: %w", s.p.rank, err)
	}
	s.finish(err)
}

// finish completes s with err, returning its staging segment.
func (s *sendReq) finish(err error) {
	s.done, s.err = true, err
	if s.staged {
		if err == nil {
			s.e.stage.put(s.seg)
		} else {
			// The receiver may still hold it mapped; this rank lets go.
			s.seg.free()
		}
		s.staged = false
	}
}

// Wait implements backends.Request: it returns once the receiver has read
// the buffer, or at once for an eager send (postEager), whose copy it
// reads.
func (s *sendReq) Wait(ctx context.Context) error {
	for !s.done {
		if s.e.closed {
			s.finish(fmt.Errorf("send to rank %d: %w", s.p.rank, backends.ErrClosed))
			break
		}
		s.e.flush()
		if s.done {
			break
		}
		if s.queued {
			if err := s.e.linkDropped(s.p); err != nil {
				s.giveUp(err)
				break
			}
			if err := s.e.await(ctx, s.p, func() bool { return !s.queued || s.e.slotFree(s.p.queue[0]) }); err != nil {
				s.giveUp(fmt.Errorf("send to rank %d: %w", s.p.rank, err))
			}
			continue
		}
		word := s.e.my.u64(slotAt(s.p.outRing, s.ticket) + slotState)
		if atomic.LoadUint64(word) == state(s.ticket, phaseDone) {
			s.e.harvest(s)
			break
		}
		err := s.e.linkDropped(s.p)
		if err == nil {
			err = s.e.await(ctx, s.p, func() bool {
				// Done, or harvested by a flush that reused the slot.
				return s.done || atomic.LoadUint64(word) == state(s.ticket, phaseDone) || s.p.ctl.dropped(s.p.outRing)
			})
			if err == nil || s.done {
				continue
			}
			err = fmt.Errorf("send to rank %d: %w", s.p.rank, err)
		}
		if atomic.CompareAndSwapUint64(word, state(s.ticket, phasePosted), state(s.ticket, phaseAbandoned)) {
			s.p.ctl.bell().ring()
			s.finish(err)
			break
		}
		// The receiver is reading the buffer: that ends without waiting
		// on anyone, unless the receiver dies or is stopped.
		if gerr := s.p.gone(); gerr != nil {
			s.finish(fmt.Errorf("send to rank %d: %w", s.p.rank, gerr))
			break
		}
		if s.awaitRead(ctx, word) {
			continue // harvested at the loop's top
		}
		s.finish(err)
		break
	}
	return s.err
}

// awaitRead waits for a receiver that took s's slot to finish reading it,
// once s's wait has failed (its op was given up by a peer, its link
// dropped, its deadline passed), and reports whether the read ended. It
// waits up to the op's deadline, and not at all past it or without one: a
// receiver stopped in its read (SIGSTOP, a debugger) would hold the op
// forever, and as it reads through its own mapping the send may end first.
func (s *sendReq) awaitRead(ctx context.Context, word *uint64) bool {
	dl, ok := ctx.Deadline()
	if !ok || !time.Now().Before(dl) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), dl)
	defer cancel()
	return s.e.await(rctx, s.p, func() bool {
		return s.done || atomic.LoadUint64(word) == state(s.ticket, phaseDone)
	}) == nil
}

// giveUp ends a queued send with err; its slot, once posted, tells the
// receiver that the send was abandoned.
func (s *sendReq) giveUp(err error) {
	s.dropped = err
	s.finish(err)
}

// slotFree reports whether the slot of queued send s is free.
func (e *endpoint) slotFree(s *sendReq) bool { return e.slotFreeAt(s.p, s.ticket) }

// slotFreeAt reports whether the slot of ticket t to p is free: the send
// before it there is done or was given up.
func (e *endpoint) slotFreeAt(p *peer, t uint64) bool {
	if t < ringSlots {
		return true
	}
	st := atomic.LoadUint64(e.my.u64(slotAt(p.outRing, t) + slotState))
	prev := t - ringSlots
	return st == state(prev, phaseDone) || st == state(prev, phaseAbandoned)
}

// recvReq is a receive from a rank of this host.
type recvReq struct {
	e        *endpoint
	p        *peer
	ticket   uint64
	dst, acc []byte
	reduce   dtype.ReduceFunc // nil for a plain receive
	call     backends.Call
	done     bool // complete, by its Wait or by progress
	err      error
}

// Wait implements backends.Request: it takes the matching send, reads the
// sender's buffer into dst (reducing on the way if asked), and releases
// the sender.
func (r *recvReq) Wait(ctx context.Context) error {
	if r.done {
		return r.err
	}
	if r.e.closed {
		r.complete(backends.ErrClosed)
		return r.err
	}
	word := r.p.ctl.u64(slotAt(r.p.inRing, r.ticket) + slotState)
	for !r.tryTake() {
		err := r.e.linkDropped(r.p)
		if err == nil {
			st := atomic.LoadUint64(word)
			err = r.e.await(ctx, r.p, func() bool { return r.done || atomic.LoadUint64(word) != st || r.p.ctl.dropped(r.p.inRing) })
		}
		if err != nil {
			r.complete(err)
		}
	}
	return r.err
}

// tryTake completes r if its send has been posted (or given up), without
// waiting, and reports whether r is complete.
func (r *recvReq) tryTake() bool {
	if r.done {
		return true
	}
	off := slotAt(r.p.inRing, r.ticket)
	word := r.p.ctl.u64(off + slotState)
	st := atomic.LoadUint64(word)
	switch {
	case st == state(r.ticket, phasePosted):
		if atomic.CompareAndSwapUint64(word, st, state(r.ticket, phaseTaken)) {
			r.complete(r.read(off))
			return true
		}
		return r.tryTake() // given up in between
	case st == state(r.ticket, phaseAbandoned) || st != 0 && st>>phaseBits > r.ticket:
		err := r.p.gone() // why, if it stopped altogether
		if err == nil {
			err = fmt.Errorf("%w: it stopped waiting for its send", backends.ErrPeerGone)
		}
		r.complete(err)
		return true
	}
	return false
}

// complete ends r with err.
func (r *recvReq) complete(err error) {
	if err != nil {
		err = fmt.Errorf("recv from rank %d: %w", r.p.rank, err)
	}
	r.done, r.err = true, err
}

// progress completes the posted receives whose sends have arrived, whoever
// waits: a sender whose ring is full waits for its earlier sends to be
// taken, which a receiver waiting on a later one must do.
func (e *endpoint) progress() {
	if e.receiving == 0 {
		return
	}
	for _, p := range e.peers {
		if p == nil || len(p.recvs) == 0 {
			continue
		}
		for _, r := range p.recvs {
			if !r.tryTake() {
				break // in order: the later ones cannot have arrived either
			}
		}
		e.popDone(p)
	}
}

// read does the receive of a slot this rank has taken, and marks it done.
func (r *recvReq) read(off int) error {
	p, c := r.p, r.p.ctl
	status, err := uint32(statusOK), error(nil)
	theirs := c.getCall(off+slotCall, r.call.Names)
	n := int(*c.u64(off + slotLen))
	eager := *c.u64(off + slotSegID) == eagerSeg && n > 0
	switch {
	case !theirs.Same(r.call):
		status = statusCall
		c.putCall(off+slotRecv, r.call)
		err = fmt.Errorf("%w: rank %d called %v as op #%d while rank %d called %v as op #%d",
			backends.ErrMismatch, p.rank, theirs, theirs.Seq, r.e.rank, r.call, r.call.Seq)
	case n != len(r.dst):
		status = statusLength
		*c.u64(off + slotRecvLen) = uint64(len(r.dst))
		err = fmt.Errorf("%w: rank %d sent %d bytes, rank %d expected %d", backends.ErrMismatch, p.rank, n, r.e.rank, len(r.dst))
	case n == 0 || r.call.NoPayload:
	default:
		mem, merr := c.mem, error(nil) // an eager send's bytes: in the ring
		if id := *c.u64(off + slotSegID); !eager {
			mem, merr = p.data(id, int(*c.u64(off + slotSegFD)), int(*c.u64(off + slotSegSize)))
		}
		at := int(*c.u64(off + slotOff))
		switch {
		case merr != nil:
			status, err = statusFailed, merr
		case at+n > len(mem):
			status = statusFailed
			err = fmt.Errorf("%w: rank %d sent bytes %d-%d of a segment of %d", backends.ErrMismatch, p.rank, at, at+n, len(mem))
		case r.reduce != nil:
			r.reduce(r.dst, r.acc[:n], mem[at:at+n])
		default:
			copy(r.dst, mem[at:at+n])
		}
	}
	atomic.StoreUint32(c.u32(off+slotStatus), status)
	atomic.StoreUint64(c.u64(off+slotState), state(r.ticket, phaseDone))
	// An eager send's sender does not wait for it, unless its ring is
	// full: a ring it does not wait for would only wake it (when it
	// sleeps, a system call and a switch of CPU for nothing: 2 ranks that
	// share a CPU woke each other 3 times per sleep).
	if !eager || atomic.LoadUint32(c.u32(r.p.inRing+ringWantDone)) != 0 {
		c.bell().ring()
	}
	return err
}

// Describe implements backends.Describer.
func (s *sendReq) Describe() string { return fmt.Sprintf("send to rank %d", s.p.rank) }

// Ready implements backends.Readier: the send is complete (an eager one
// from when it was posted), so Wait will not wait for the receiver.
func (s *sendReq) Ready() bool { return s.done }

// Describe implements backends.Describer.
func (r *recvReq) Describe() string { return fmt.Sprintf("receive from rank %d", r.p.rank) }

// Peer implements backends.PeerReporter.
func (s *sendReq) Peer() (int, bool) { return s.p.rank, true }

// Peer implements backends.PeerReporter.
func (r *recvReq) Peer() (int, bool) { return r.p.rank, false }
