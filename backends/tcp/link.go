package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// chunkSize is how much of an incoming message is reduced at a time: small
// enough to stay in cache between the socket read and the reduction, large
// enough that per-chunk overhead stays negligible. A multiple of every
// element size.
const chunkSize = 256 << 10

// link is this rank's end of the connection to one peer. Posted sends and
// receives queue on it in order; a writer goroutine sends the queued sends
// and a reader goroutine fills the queued receives, so an algorithm step
// sends and receives at the same time. Until the connection exists the
// queues just fill.
type link struct {
	ep   *endpoint
	peer int

	mu    sync.Mutex // guards the fields below
	sends []*request // posted, not yet written
	recvs []*request // posted, not yet filled
	conn  net.Conn   // nil until connected
	err   error      // set once the link has failed; every request fails with it
	// wake is closed, and replaced, when a request is posted, the
	// connection arrives, or the link fails.
	wake chan struct{}
	// dialing is set once the dial to a higher-ranked peer has started.
	dialing bool
	// writing is set while a goroutine (the writer, or a poster writing a
	// small message inline) owns the connection's write side.
	writing bool
	// filling is set while the reader fills a receive it has taken off
	// the queue: someone is waiting on the data coming in.
	filling bool
	// sendSeq numbers the data frames sent, and frame assembles small
	// frames; both are owned by whoever is writing.
	sendSeq uint64
	frame   []byte
}

// inlineMax is the largest message a poster writes to the socket itself
// when nothing is queued before it, saving the hand-off to the writer
// goroutine (tens of microseconds on virtual machines). Small enough to fit
// in the socket buffer, so the write does not wait for the peer.
const inlineMax = 16 << 10

// smallFrame is the largest payload copied behind its header to go out in
// one write; larger ones are written from where they are.
const smallFrame = 4 << 10

// readBuffer is the reader's buffer: one read brings in the header and
// payload of a small message together.
const readBuffer = 64 << 10

func newLink(ep *endpoint, peer int) *link {
	return &link{ep: ep, peer: peer, wake: make(chan struct{})}
}

// request is a posted send or receive.
type request struct {
	l      *link
	send   bool
	buf    []byte // send payload, or receive destination
	acc    []byte // receive-and-reduce accumulator
	reduce dtype.ReduceFunc
	call   backends.Call
	done   chan struct{} // closed when finished
	err    error         // valid once done is closed
}

func (r *request) finish(err error) {
	r.err = err
	close(r.done)
}

// Wait implements backends.Request.
func (r *request) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		// The buffer stays with the link until it finishes or the
		// endpoint closes; the run is failing anyway.
		dir := "recv from"
		if r.send {
			dir = "send to"
		}
		return fmt.Errorf("%s rank %d: %w", dir, r.l.peer, backends.ContextError(ctx))
	}
}

// notifyLocked wakes the link's goroutines. l.mu must be held.
func (l *link) notifyLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// post queues a request and makes sure the connection is on its way.
func (l *link) post(r *request) *request {
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		r.finish(err)
		return r
	}
	if r.send && l.conn != nil && !l.writing && len(l.sends) == 0 && len(r.buf) <= inlineMax {
		l.writing = true
		l.mu.Unlock()
		err := l.write(r)
		l.mu.Lock()
		l.writing = false
		l.notifyLocked()
		l.mu.Unlock()
		if err != nil {
			l.fail(l.lost("sending to", err))
		}
		r.finish(err)
		return r
	}
	if r.send {
		l.sends = append(l.sends, r)
	} else {
		l.recvs = append(l.recvs, r)
	}
	l.notifyLocked()
	dial := l.conn == nil && !l.dialing && l.ep.rank < l.peer
	if dial {
		l.dialing = true
	}
	l.mu.Unlock()
	if dial {
		l.ep.goDial(l)
	}
	return r
}

// attach gives the link its connection and starts its goroutines. It
// reports false if the link already has one (a duplicate) or has failed.
func (l *link) attach(conn net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil || l.err != nil {
		return false
	}
	l.conn = conn
	l.notifyLocked()
	l.ep.wg.Add(2)
	go l.writeLoop()
	go l.readLoop()
	return true
}

// fail ends the link: every pending and future request fails with err.
func (l *link) fail(err error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	l.err = err
	pending := append(l.sends, l.recvs...)
	l.sends, l.recvs = nil, nil
	conn := l.conn
	l.notifyLocked()
	l.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	for _, r := range pending {
		r.finish(err)
	}
}

// take blocks until the queue that pick selects has a request, and removes
// and returns its head, which the caller then owns and must finish; or it
// returns the link's error. pick runs with l.mu held.
func (l *link) take(pick func() *[]*request) (*request, error) {
	for {
		l.mu.Lock()
		if l.err != nil {
			err := l.err
			l.mu.Unlock()
			return nil, err
		}
		if q := pick(); q != nil && len(*q) > 0 {
			r := (*q)[0]
			(*q)[0] = nil
			*q = (*q)[1:]
			l.mu.Unlock()
			return r, nil
		}
		wake := l.wake
		l.mu.Unlock()
		<-wake
	}
}

// writeLoop sends the queued sends in order, each as one frame. It takes
// each send off the queue before writing it, so the send is finished once,
// by the writer, with the write's own outcome: a peer that reads the
// message and then closes cannot fail a send that was delivered.
func (l *link) writeLoop() {
	defer l.ep.wg.Done()
	for {
		// The picker runs under l.mu: taking a send and claiming the
		// write side happen together, so an inline writer cannot slip in.
		r, err := l.take(func() *[]*request {
			if l.writing || len(l.sends) == 0 {
				return nil
			}
			l.writing = true
			return &l.sends
		})
		if err != nil {
			return
		}
		err = l.write(r)
		l.mu.Lock()
		l.writing = false
		l.notifyLocked()
		l.mu.Unlock()
		if err != nil {
			err = l.lost("sending to", err)
			r.finish(err)
			l.fail(err)
			return
		}
		r.finish(nil)
	}
}

// write sends one message as a frame. The caller owns the write side.
func (l *link) write(r *request) error {
	var hdr [HeaderSize]byte
	Header{Kind: KindData, Op: r.call.Op, DType: r.call.DType, Call: r.call.Seq, Seq: l.sendSeq, Len: uint64(len(r.buf))}.Put(hdr[:])
	var err error
	if len(r.buf) <= smallFrame {
		// One write for header and payload: a single segment on the wire.
		l.frame = append(append(l.frame[:0], hdr[:]...), r.buf...)
		err = writeAll(l.conn, l.frame)
	} else {
		l.ep.bigWrites.Add(1)
		bufs := net.Buffers{hdr[:], r.buf}
		_, err = bufs.WriteTo(l.conn)
		l.ep.bigWrites.Add(-1)
	}
	if err == nil {
		l.sendSeq++
	}
	return err
}

// readLoop fills the queued receives in order from the incoming frames.
func (l *link) readLoop() {
	defer l.ep.wg.Done()
	var seq uint64
	var hdr [HeaderSize]byte
	staging := make([]byte, chunkSize)
	// Buffered, so a small message's header and payload come in one read;
	// reads larger than the buffer go straight to the destination.
	in := bufio.NewReaderSize(newPollReader(l.conn, l.readState, l.ep.writersBusy, l.awaitRecv), readBuffer)
	for {
		h, err := ReadHeader(in, &hdr)
		if err != nil {
			l.fail(l.lost("receiving from", err))
			return
		}
		if h.Kind == KindAbort {
			l.fail(l.aborted(in, h))
			return
		}
		if h.Kind != KindData || h.Seq != seq {
			l.fail(fmt.Errorf("rank %d: %w: got %v frame #%d, expected data frame #%d", l.peer, ErrBadFrame, h.Kind, h.Seq, seq))
			return
		}
		seq++
		r, err := l.take(func() *[]*request {
			if len(l.recvs) > 0 {
				l.filling = true
			}
			return &l.recvs
		})
		if err != nil {
			return
		}
		if err := l.match(h, r); err != nil {
			r.finish(err)
			l.fail(err)
			return
		}
		err = l.fill(in, r, staging)
		l.mu.Lock()
		l.filling = false
		l.mu.Unlock()
		if err != nil {
			err = l.lost("receiving from", err)
			r.finish(err)
			l.fail(err)
			return
		}
		r.finish(nil)
	}
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
	return fmt.Errorf("%w: rank %d stopped: %s", backends.ErrPeerGone, l.peer, msg)
}

// abort tells the peer, if the connection is up and idle, why this rank is
// stopping, in a frame written before the connection closes.
func (l *link) abort(why error) {
	l.mu.Lock()
	if l.conn == nil || l.err != nil || l.writing {
		l.mu.Unlock()
		return
	}
	l.writing = true
	conn := l.conn
	l.mu.Unlock()
	msg := why.Error()
	if len(msg) > maxAbort {
		msg = msg[:maxAbort]
	}
	var hdr [HeaderSize]byte
	Header{Kind: KindAbort, Len: uint64(len(msg))}.Put(hdr[:])
	_ = conn.SetWriteDeadline(time.Now().Add(abortWrite))
	_, _ = conn.Write(append(hdr[:], msg...))
}

// abortWrite bounds how long a stopping rank tries to tell a peer why.
const abortWrite = 500 * time.Millisecond

// readState reports whether a receive is posted, whether the reader is in
// the middle of filling one, and whether the link has ended.
func (l *link) readState() (posted, filling, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recvs) > 0, l.filling, l.err != nil
}

// awaitRecv blocks until a receive is posted or the link has failed.
func (l *link) awaitRecv() {
	for {
		l.mu.Lock()
		if len(l.recvs) > 0 || l.err != nil {
			l.mu.Unlock()
			return
		}
		wake := l.wake
		l.mu.Unlock()
		<-wake
	}
}

// match checks that an incoming frame is the one the receive expects.
func (l *link) match(h Header, r *request) error {
	me := l.ep.rank
	if h.Call != r.call.Seq || h.Op != r.call.Op || h.DType != r.call.DType {
		return fmt.Errorf("%w: rank %d sent a message of call #%d %s while rank %d was in call #%d %s",
			backends.ErrMismatch, l.peer, h.Call, backends.DescribeCall(h.Op, h.DType),
			me, r.call.Seq, backends.DescribeCall(r.call.Op, r.call.DType))
	}
	if h.Len != uint64(len(r.buf)) {
		return fmt.Errorf("%w: rank %d sent %d bytes, rank %d expected %d (call #%d %s)",
			backends.ErrMismatch, l.peer, h.Len, me, len(r.buf), h.Call, backends.DescribeCall(h.Op, h.DType))
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
