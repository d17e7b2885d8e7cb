package proc

import "sync/atomic"

// eagerSeg is the segment id of a slot whose bytes are in the sender's
// control segment, at the slot's offset: an eager send's.
const eagerSeg = ^uint64(0)

// postEager posts small send s by copying its bytes into an eager buffer
// of the ring, and completes it at once: its sender goes on without
// waiting for the receiver to read it, a hand-off fewer per message (a
// small message's cost is its hand-offs). It reports false, having done
// nothing, when the send must go the usual way: its slot or eager buffer
// is still in use, the peer has closed its endpoint (whose sends must
// fail), or the host has too many ranks for eager buffers (eagerHosts).
func (e *endpoint) postEager(s *sendReq) bool {
	p := s.p
	t := p.nextSend
	if p.eagerOut < 0 || p.ctl.closed() || !e.slotFreeAt(p, t) || !e.eagerFree(p, t) {
		return false
	}
	if old := p.inflight[t%ringSlots]; old != nil && !old.done {
		e.harvest(old)
	}
	p.inflight[t%ringSlots] = nil
	off, at := slotAt(p.outRing, t), p.eagerOut+int(t%eagerSlots)*eagerMax
	copy(e.my.mem[at:at+len(s.buf)], s.buf)
	*e.my.u64(off + slotSegID) = eagerSeg
	*e.my.u64(off + slotOff) = uint64(at)
	*e.my.u64(off + slotLen) = uint64(len(s.buf))
	e.my.putCall(off+slotCall, s.call)
	s.ticket = t
	p.nextSend++
	p.eagerLast[t%eagerSlots] = t + 1
	atomic.StoreUint64(e.my.u64(off+slotState), state(t, phasePosted))
	p.ctl.bell().ring()
	s.done = true
	return true
}

// eagerFree reports whether the eager buffer of ticket t to p is free:
// the receive of the last send copied into it is done (or was given up).
func (e *endpoint) eagerFree(p *peer, t uint64) bool {
	last := p.eagerLast[t%eagerSlots]
	if last == 0 {
		return true
	}
	prev := last - 1
	if t-prev >= ringSlots {
		return true // its slot has been reused since, which waited for it
	}
	st := atomic.LoadUint64(e.my.u64(slotAt(p.outRing, prev) + slotState))
	return st == state(prev, phaseDone) || st == state(prev, phaseAbandoned)
}
