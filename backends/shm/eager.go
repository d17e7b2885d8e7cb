package shm

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/freelist"
)

// Eager sends. A send of at most EagerBytes is copied when it is posted
// and completes at once, as Open MPI's shared-memory transport sends small
// messages: the receiver reads the copy, and the sender does not wait for
// it to finish. A small message then costs one hand-off between the ranks
// where a send that lends its buffer costs two (posted, then read), which
// at 1 KiB is most of its time. Larger messages lend the buffer, which
// saves the copy.
const (
	// EagerBytes is the largest message sent eagerly.
	EagerBytes = 4 << 10
	// EagerDepth is how many eager sends a link holds unread; a send
	// beyond them lends its buffer, which also keeps a sender that
	// outruns its receiver from piling up copies.
	EagerDepth = 4
	// EagerRanks is the largest world whose links send eagerly, which
	// bounds the copies' memory: EagerDepth·EagerBytes a link, at most
	// 64 MiB in a world of 64 ranks that all message one another.
	EagerRanks = 64
)

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

// eagerBox is the sending side of a link's eager sends, used by the
// sending rank's goroutine alone: the sends it has posted, in order, and
// the ones whose copies the receiver has finished with.
type eagerBox struct {
	out  []*sendReq // posted, oldest first
	idle []*sendReq // read by the receiver: free to reuse
	sent eagerSent  // the request every eager send returns
}

// eagerSend returns a send request holding a copy of buf, or nil when the
// link holds EagerDepth unread ones already.
func (e *endpoint) eagerSend(l *link, peer int, buf []byte) *sendReq {
	b := &l.eager
	for len(b.out) > 0 && b.out[0].fin.Load() {
		b.idle = append(b.idle, b.out[0])
		b.out = append(b.out[:0], b.out[1:]...)
	}
	if len(b.out) == EagerDepth {
		return nil
	}
	s := freelist.Pop(&b.idle)
	if s != nil {
		s.rearm()
	} else {
		s = &sendReq{owner: e, eager: true, store: make([]byte, EagerBytes)}
	}
	s.buf = append(s.store[:0], buf...)
	s.peer, s.spin, s.call, s.bell = peer, false, e.call, l.sendBell
	b.out = append(b.out, s)
	b.sent.peer = peer
	return s
}

// eagerOK reports whether a send of buf goes eagerly: small, in a small
// world, and with a payload (a call without one may not even have memory
// behind its buffers).
func (e *endpoint) eagerOK(buf []byte) bool {
	return len(buf) <= EagerBytes && e.w.size <= EagerRanks && !e.call.NoPayload
}

var _ backends.Request = (*eagerSent)(nil)
