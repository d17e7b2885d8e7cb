package shm

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/hccl-test/hccl-test/backends"
)

// Eager sends. A send of at most EagerBytes is copied when it is posted
// and completes at once, as Open MPI's shared-memory transport sends small
// messages: the receiver reads the copy, and the sender does not wait for
// it to finish. A small message then costs one hand-off between the ranks
// where a send that lends its buffer costs two (posted, then read), which
// at 1 KiB is most of its time. Larger messages lend the buffer, which
// saves the copy.
//
// The copies sit in a ring of EagerDepth slots a link, one writer (the
// sending rank) and one reader (the receiving rank), that neither locks:
// the send of ticket t goes to slot t mod EagerDepth when that slot is
// free, and is then posted as any send is, by the link's count of sent
// tickets. The receive of ticket t finds it there, or, when the slot
// holds another ticket, among the lent sends in the link's queue. Taking
// the link's lock, and a request shared by both ranks, were most of a
// small message's cost: each is a cache line that moves between the
// ranks' processors.
const (
	// EagerBytes is the largest message sent eagerly.
	EagerBytes = 4 << 10
	// EagerDepth is how many eager sends a link holds unread; a send
	// whose slot is still unread lends its buffer, which also keeps a
	// sender that outruns its receiver from piling up copies.
	EagerDepth = 4
	// EagerRanks is the largest world whose links send eagerly, which
	// bounds the copies' memory: EagerDepth·EagerBytes a link, at most
	// 64 MiB in a world of 64 ranks that all message one another.
	EagerRanks = 64
)

// eagerSlot holds one eager send's copy.
type eagerSlot struct {
	// full is the ticket of the send held plus one; 0 when the slot is
	// free. The sender fills the slot, then sets full; the receiver
	// reads it, then clears full.
	full atomic.Uint64
	call backends.Call // the sender's call, which the receive checks
	n    int           // the message's length
	data [EagerBytes]byte
}

// eagerRing is a link's slots, made on its first eager send.
type eagerRing [EagerDepth]eagerSlot

// eagerSent is the request of an eager send: done when posted. Each link
// holds one, which every eager send on it returns, so that a send
// allocates nothing.
type eagerSent struct{ peer int }

func (*eagerSent) Wait(context.Context) error { return nil }

// Describe implements backends.Describer.
func (s *eagerSent) Describe() string { return fmt.Sprintf("send to rank %d (sent eagerly)", s.peer) }

// Ready implements backends.Readier: an eager send is done when posted.
func (*eagerSent) Ready() bool { return true }

// Peer implements backends.PeerReporter.
func (s *eagerSent) Peer() (int, bool) { return s.peer, true }

// eagerSend posts a copy of buf as the link's next send and returns its
// request, or returns nil when the send must lend its buffer: the slot of
// its ticket is unread, or the link is dropped (which the locked path
// reports).
func (e *endpoint) eagerSend(l *link, peer int, buf []byte) backends.Request {
	if l.down.Load() {
		return nil
	}
	ring := l.slots.Load()
	if ring == nil {
		ring = new(eagerRing)
		l.slots.Store(ring)
	}
	t := l.nextSend // the sender's alone (see link)
	slot := &ring[t%EagerDepth]
	if slot.full.Load() != 0 {
		return nil
	}
	slot.n = copy(slot.data[:], buf)
	slot.call = e.call
	slot.full.Store(t + 1)
	l.nextSend = t + 1
	l.post(t + 1)
	l.eagerReq.peer = peer
	return &l.eagerReq
}

// eagerOK reports whether a send of buf goes eagerly: small, in a small
// world, and with a payload (a call without one may not even have memory
// behind its buffers).
func (e *endpoint) eagerOK(buf []byte) bool {
	return len(buf) <= EagerBytes && e.w.size <= EagerRanks && !e.call.NoPayload
}

// eagerSlotOf returns the slot holding the eager send of ticket, nil if
// that send lent its buffer. The send must be posted (link.sent).
func (l *link) eagerSlotOf(ticket uint64) *eagerSlot {
	ring := l.slots.Load()
	if ring == nil {
		return nil
	}
	if slot := &ring[ticket%EagerDepth]; slot.full.Load() == ticket+1 {
		return slot
	}
	return nil
}

// readEager completes r from the eager copy in slot and frees the slot.
func (r *recvReq) readEager(slot *eagerSlot) error {
	defer slot.full.Store(0)
	if !slot.call.Same(r.call) {
		r.err = fmt.Errorf("recv from rank %d: %w: rank %d called %v as op #%d while rank %d called %v as op #%d",
			r.peer, backends.ErrMismatch, r.peer, slot.call, slot.call.Seq, r.e.rank, r.call, r.call.Seq)
		return r.err
	}
	if slot.n != len(r.dst) {
		r.err = fmt.Errorf("recv from rank %d: %w: rank %d sent %d bytes, rank %d expected %d",
			r.peer, backends.ErrMismatch, r.peer, slot.n, r.e.rank, len(r.dst))
		return r.err
	}
	src := slot.data[:slot.n]
	if r.reduce != nil {
		r.reduce(r.dst, r.acc[:len(r.dst)], src)
	} else {
		copy(r.dst, src)
	}
	return nil
}

// clearSlots frees every eager slot. Neither side may be using the link.
func (l *link) clearSlots() {
	if ring := l.slots.Load(); ring != nil {
		for i := range ring {
			ring[i].full.Store(0)
		}
	}
}

var _ backends.Request = (*eagerSent)(nil)
