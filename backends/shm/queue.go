package shm

// sendQueue holds a link's posted sends that lend their buffers and that
// no receive has taken yet, with their tickets, in ticket order. The
// tickets of eager sends (eager.go) are not in it, so its tickets have
// gaps. Receives take sends mostly in ticket order, so the queue stays a
// few entries long, is searched from its front, and reuses its array,
// where a map hashed every message.
type sendQueue struct {
	buf  []queuedSend // buf[head:] are queued, or taken (s nil)
	head int
}

// queuedSend is a send in the queue and its ticket.
type queuedSend struct {
	ticket uint64
	s      *sendReq
}

// push appends the send of ticket, which is above every ticket pushed
// before.
func (q *sendQueue) push(ticket uint64, s *sendReq) {
	q.buf = append(q.buf, queuedSend{ticket, s})
}

// take removes and returns the send of ticket, or reports false if it is
// not queued (not posted yet, taken, or eager).
func (q *sendQueue) take(ticket uint64) (*sendReq, bool) {
	i := q.head
	for i < len(q.buf) && q.buf[i].ticket < ticket {
		i++
	}
	if i == len(q.buf) || q.buf[i].ticket != ticket || q.buf[i].s == nil {
		return nil, false
	}
	s := q.buf[i].s
	q.buf[i].s = nil
	for q.head < len(q.buf) && q.buf[q.head].s == nil {
		q.head++
	}
	switch {
	case q.head == len(q.buf):
		q.buf, q.head = q.buf[:0], 0
	case q.head > len(q.buf)/2:
		// Taken from the front while later tickets wait: move them down
		// rather than grow the array.
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	return s, true
}

// drain removes every queued send, calling f on each.
func (q *sendQueue) drain(f func(*sendReq)) {
	for _, e := range q.buf[q.head:] {
		if e.s != nil {
			f(e.s)
		}
	}
	q.reset()
}

// reset empties the queue.
func (q *sendQueue) reset() {
	clear(q.buf)
	q.buf, q.head = q.buf[:0], 0
}
