package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
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
	// readerWake wakes the reader when a receive is posted, and
	// writerWake the writer when a send is queued or the write side is
	// free again; both when the connection arrives or the link fails.
	// Conditions rather than a channel closed and made anew: that was an
	// allocation a message, and woke both goroutines for either's news.
	readerWake, writerWake sync.Cond
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
	// hdr is the header being written and wr writes to conn; both are
	// owned by whoever is writing, wr set with conn.
	hdr [HeaderSize]byte
	wr  *rawWriter
	// stop is closed when the link fails, to cut short a dial in
	// progress; dialConn is the connection that dial is handshaking on,
	// which failing the link closes.
	stop     chan struct{}
	dialConn net.Conn

	// reading is set while a goroutine reads from in: the reader, or a
	// waiter filling its own receive (readInline). in, pr and rseq belong
	// to whoever is reading.
	reading bool
	in      *bufio.Reader
	pr      *pollReader
	rseq    uint64

	// lwg counts the goroutines that belong to the current connection:
	// its reader and writer, and a dial in progress. They count in ep.wg
	// too; reset waits for them alone.
	lwg sync.WaitGroup
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
// payload of a small frame together. No larger: the payload bytes a read
// brings in behind a header are copied once more, out of this buffer, and
// with 64 KiB that was up to 64 KiB of every large message (2% of the
// CPU of a 1 MiB allreduce at 8 ranks went to that copy).
const readBuffer = HeaderSize + smallFrame

func newLink(ep *endpoint, peer int) *link {
	l := &link{ep: ep, peer: peer, stop: make(chan struct{})}
	l.readerWake.L, l.writerWake.L = &l.mu, &l.mu
	return l
}

// notifyLocked wakes the link's goroutines. l.mu must be held.
func (l *link) notifyLocked() {
	l.readerWake.Broadcast()
	l.writerWake.Broadcast()
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
		l.writerWake.Broadcast()
		l.mu.Unlock()
		if err != nil {
			l.fail(l.lost("sending to", err))
		}
		r.finish(err)
		return r
	}
	if r.send {
		l.sends = append(l.sends, r)
		l.writerWake.Broadcast()
	} else {
		l.recvs = append(l.recvs, r)
		l.readerWake.Broadcast()
	}
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

// attach gives the link its connection, made at link epoch epoch, and
// starts its goroutines. It refuses, saying why, a connection when the
// link already has one (a duplicate), has failed, or is at another epoch
// (the connection was made before the links were reset).
func (l *link) attach(conn net.Conn, epoch uint32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch now := l.ep.epoch.Load(); {
	case l.err != nil:
		return fmt.Errorf("the link has failed: %w", l.err)
	case l.conn != nil:
		return errors.New("a duplicate of the link's connection")
	case epoch != now:
		return fmt.Errorf("made at link epoch %d, the links are at %d (a connection from before they were reset)", epoch, now)
	}
	l.conn, l.wr = conn, newRawWriter(conn)
	l.in, l.pr = nil, nil
	l.notifyLocked()
	l.ep.wg.Add(2)
	l.lwg.Add(2)
	go l.writeLoop()
	go l.readLoop()
	return nil
}

// handshaking records conn as the connection a dial is handshaking on, so
// that failing the link cuts the handshake short; nil clears it. It
// reports false, recording nothing, once the link has failed.
func (l *link) handshaking(conn net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if conn != nil && l.err != nil {
		return false
	}
	l.dialConn = conn
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
	conn, dialConn := l.conn, l.dialConn
	close(l.stop)
	l.notifyLocked()
	l.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	if dialConn != nil {
		dialConn.Close()
	}
	for _, r := range pending {
		r.finish(err)
	}
}

// take blocks until the queue that pick selects has a request, and removes
// and returns its head, which the caller then owns and must finish; or it
// returns the link's error. pick runs with l.mu held; the caller waits on
// wake, which must be its own goroutine's condition.
func (l *link) take(wake *sync.Cond, pick func() *[]*request) (*request, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.err != nil {
			return nil, l.err
		}
		if q := pick(); q != nil && len(*q) > 0 {
			// Shifted down rather than resliced, so that the queue
			// keeps its array and posting never grows a new one.
			r := (*q)[0]
			n := copy(*q, (*q)[1:])
			(*q)[n] = nil
			*q = (*q)[:n]
			return r, nil
		}
		wake.Wait()
	}
}
