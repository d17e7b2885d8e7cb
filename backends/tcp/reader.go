package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hccl-test/hccl-test/backends"
)

// readLoop fills the queued receives in order from the incoming frames. It
// reads only while it holds the link's read side (reading), which it takes
// once a receive is posted (at once when polling is off, to park in the
// network poller) and gives up between frames, so that a waiter may fill
// its own small receive meanwhile (readInline). Idling for a receive
// before reading, rather than reading first, saves a read that finds the
// socket empty, a system call a message, and leaves the polling to
// whoever waits; the read after the idle takes what came meanwhile.
func (l *link) readLoop() {
	defer l.ep.wg.Done()
	defer l.lwg.Done()
	var hdr [HeaderSize]byte
	staging := make([]byte, chunkSize)
	// Buffered, so a small message's header and payload come in one read;
	// reads larger than the buffer go straight to the destination.
	pr := newPollReader(l.conn, l.readState, l.ep.writersBusy)
	in := bufio.NewReaderSize(pr, readBuffer)
	l.mu.Lock()
	for l.reading && l.err == nil {
		l.readerWake.Wait() // a waiter still reads the last connection
	}
	l.in, l.pr, l.rseq = in, nil, 0
	if p, ok := pr.(*pollReader); ok {
		l.pr = p
	}
	l.mu.Unlock()
	for {
		l.mu.Lock()
		for l.err == nil && (l.reading || (len(l.recvs) == 0 && spinBudget > 0)) {
			l.readerWake.Wait()
		}
		if l.err != nil {
			l.mu.Unlock()
			return
		}
		l.reading = true
		l.mu.Unlock()
		stop := l.readFrame(in, &hdr, staging)
		l.mu.Lock()
		l.reading = false
		l.readerWake.Broadcast()
		l.mu.Unlock()
		if stop {
			return
		}
	}
}

// readFrame reads one frame and fills the receive it is for; it reports
// true when the link has ended.
func (l *link) readFrame(in *bufio.Reader, hdr *[HeaderSize]byte, staging []byte) bool {
	h, err := ReadHeader(in, hdr)
	if err != nil {
		l.fail(l.lost("receiving from", err))
		return true
	}
	if h.Kind == KindAbort {
		l.fail(l.aborted(in, h))
		return true
	}
	if h.Kind != KindData || h.Seq != l.rseq {
		l.fail(fmt.Errorf("rank %d: %w: got %v frame #%d, expected data frame #%d", l.peer, ErrBadFrame, h.Kind, h.Seq, l.rseq))
		return true
	}
	l.rseq++
	r, err := l.take(&l.readerWake, func() *[]*request {
		if len(l.recvs) > 0 {
			l.filling = true
		}
		return &l.recvs
	})
	if err != nil {
		return true
	}
	if err := l.match(h, r); err != nil {
		// Tell the peer too, so that its error names both sides
		// rather than a closed connection.
		l.abort(err)
		r.finish(err)
		l.fail(err)
		return true
	}
	err = l.fill(in, r, staging)
	l.mu.Lock()
	l.filling = false
	l.mu.Unlock()
	if err != nil {
		err = l.lost("receiving from", err)
		r.finish(err)
		l.fail(err)
		return true
	}
	r.finish(nil)
	return false
}

// maxAbort bounds the error text an abort frame may carry.
const maxAbort = 4 << 10

// aborted reads an abort frame's text and turns it into the link's error:
// the peer stopped, and why, so a failure can be traced to where it began.
func (l *link) aborted(in io.Reader, h Header) error {
	if h.Len > maxAbort {
		return fmt.Errorf("rank %d: %w: abort frame of %d bytes", l.peer, ErrBadFrame, h.Len)
	}
	msg := make([]byte, h.Len)
	if err := ReadPayload(in, msg); err != nil {
		return l.lost("receiving from", err)
	}
	return peerStopped{msg: fmt.Sprintf("%v: rank %d stopped: %s", backends.ErrPeerGone, l.peer, msg), mismatch: h.Op == AbortMismatch}
}

// peerStopped is the error of a link whose peer sent an abort: it is
// backends.ErrPeerGone, and also backends.ErrMismatch when the peer
// stopped because of a mismatch (AbortMismatch).
type peerStopped struct {
	msg      string
	mismatch bool
}

func (e peerStopped) Error() string { return e.msg }

// Is makes errors.Is match the sentinels above.
func (e peerStopped) Is(target error) bool {
	return target == backends.ErrPeerGone || (e.mismatch && target == backends.ErrMismatch)
}

// readState reports whether a receive is posted, whether the reader is in
// the middle of filling one, and whether the link has ended.
func (l *link) readState() (posted, filling, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recvs) > 0, l.filling, l.err != nil
}

// match checks that an incoming frame is the one the receive expects.
func (l *link) match(h Header, r *request) error {
	me := l.ep.rank
	if h.Call != r.call.Seq || h.Op != r.call.Op || h.DType != r.call.DType {
		return fmt.Errorf("%w: rank %d called %s as op #%d while rank %d called %v as op #%d",
			backends.ErrMismatch, l.peer, r.call.NameOp(h.Op, h.DType), h.Call,
			me, r.call, r.call.Seq)
	}
	if h.Len != uint64(len(r.buf)) {
		return fmt.Errorf("%w: rank %d sent %d bytes in %s as op #%d while rank %d called %v, expecting %d",
			backends.ErrMismatch, l.peer, h.Len, r.call.NameOp(h.Op, h.DType), h.Call, me, r.call, len(r.buf))
	}
	return nil
}

// fill reads a message's payload into the receive, reducing chunk by chunk
// as it arrives for a receive-and-reduce.
func (l *link) fill(in io.Reader, r *request, staging []byte) error {
	if r.reduce == nil {
		return ReadPayload(in, r.buf)
	}
	for off := 0; off < len(r.buf); {
		n := min(len(staging), len(r.buf)-off)
		if err := ReadPayload(in, staging[:n]); err != nil {
			return err
		}
		r.reduce(r.buf[off:off+n], r.acc[off:off+n], staging[:n])
		off += n
	}
	return nil
}

// lost turns a connection error into the error that names the peer.
func (l *link) lost(what string, err error) error {
	select {
	case <-l.ep.closed:
		return backends.ErrClosed
	default:
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s rank %d: %w: it closed the connection", what, l.peer, backends.ErrPeerGone)
	}
	if errors.Is(err, ErrBadFrame) {
		return fmt.Errorf("%s rank %d: %w", what, l.peer, err)
	}
	return fmt.Errorf("%s rank %d: %w: %v", what, l.peer, backends.ErrPeerGone, err)
}
