package shm

// sendQueue holds a link's posted sends that no receive has taken yet, by
// ticket: buf[head+i] is the send of ticket first+i, nil once taken.
// Receives take sends mostly in ticket order, so the queue stays a few
// entries long and reuses its array, where a map hashed every message.
type sendQueue struct {
	first uint64 // ticket of buf[head]; with the queue empty, the next ticket
	buf   []*sendReq
	head  int
}

// push appends the send of the next ticket.
func (q *sendQueue) push(s *sendReq) { q.buf = append(q.buf, s) }

// take removes and returns the send of ticket, or reports false if it is
// not queued (not posted yet, or taken).
func (q *sendQueue) take(ticket uint64) (*sendReq, bool) {
	if ticket < q.first || ticket-q.first >= uint64(len(q.buf)-q.head) {
		return nil, false
	}
	i := q.head + int(ticket-q.first)
	s := q.buf[i]
	if s == nil {
		return nil, false
	}
	q.buf[i] = nil
	for q.head < len(q.buf) && q.buf[q.head] == nil {
		q.head++
		q.first++
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

// drain removes every queued send, calling f on each; the tickets stay
// used.
func (q *sendQueue) drain(f func(*sendReq)) {
	for _, s := range q.buf[q.head:] {
		if s != nil {
			f(s)
		}
	}
	q.first += uint64(len(q.buf) - q.head)
	clear(q.buf)
	q.buf, q.head = q.buf[:0], 0
}

// reset empties the queue and starts its tickets again from zero.
func (q *sendQueue) reset() {
	clear(q.buf)
	q.buf, q.head, q.first = q.buf[:0], 0, 0
}
