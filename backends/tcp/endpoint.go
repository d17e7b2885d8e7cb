package tcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/agree"
	"github.com/hccl-test/hccl-test/dtype"
)

// socketBuffer is the kernel buffer size asked for on every connection
// when each rank has a CPU: room for a few MiB in flight each way, so a
// ring step's send rarely waits for the peer's reader at the sizes where
// bandwidth matters.
const socketBuffer = 4 << 20

// sharedSocketBuffer is the kernel buffer size asked for when more ranks
// share the host than it has CPUs. A rank then waits its turn for a CPU
// while its peers write, and with 4 MiB a connection (8 in the kernel's
// count) up to n-1 connections a rank fill far beyond the caches before it
// reads. 8 ranks on 2 CPUs, 64 MiB, medians of 4-5 interleaved runs
// against 4 MiB: tree broadcast -24%, direct alltoall -13%, allgather
// -16%, rhd allreduce -8 to -11%, reducescatter unchanged; 1 MiB
// allreduce unchanged, where 512 KiB was 19% slower. At 2 ranks on 2 CPUs
// 1 MiB matched 4 MiB and 256 KiB was 40% slower.
const sharedSocketBuffer = 1 << 20

// socketBufferSize returns the kernel buffer size to ask for.
func socketBufferSize() int {
	if oversubscribed {
		return sharedSocketBuffer
	}
	return socketBuffer
}

// endpoint is one rank's Transport over TCP. Each pair of ranks shares one
// connection, made when the pair first exchanges a message: the lower rank
// dials the higher rank's listener. So a rank connects only to the peers its
// algorithms use.
type endpoint struct {
	rank, size     int
	secret         []byte
	connectTimeout time.Duration
	log            io.Writer

	ln    net.Listener
	addrs []string // every rank's listener address, from the rendezvous
	links []*link  // by peer; links[rank] is nil

	// rendezvous receives rank 0's rendezvous connections during setup;
	// nil on other ranks and once setup is over.
	rdvMu      sync.Mutex // guards rendezvous
	rendezvous chan rendezvousConn

	call backends.Call // the current call; used only by the rank's goroutine
	// free holds released requests for reuse (Release); used only by
	// the rank's goroutine.
	free []*request

	// pendingMu guards pending: connections still in their handshake,
	// which Close cuts short rather than waiting out their deadline.
	pendingMu sync.Mutex
	pending   map[net.Conn]struct{}

	// bigWrites counts large writes in progress, which may wait for
	// socket space (see pollReader).
	bigWrites atomic.Int32
	// inlineFills counts the receives filled by their waiters (readInline).
	inlineFills atomic.Int64
	// bigTurn is the turn to stream a large frame on an oversubscribed
	// host (writeInTurn): a one-slot semaphore.
	bigTurn chan struct{}
	// turnWaiters counts the frames waiting for bigTurn.
	turnWaiters atomic.Int32

	// epoch counts the times Recover has reset the links; every link
	// connection is made at one epoch (Hello.Epoch) and used only in it.
	epoch atomic.Uint32
	// agree is what this rank says in every hello's Agree (agreement).
	agree string
	// retry is Config.Retry: the world was set up to run failed calls
	// again. ctl is its control plane (nil when retry is off or the
	// world has one rank); watcher stops the rank's current attempt when
	// another rank reports a failure, and watchSeq is the call it watches.
	retry    bool
	ctl      *control
	watcher  agree.Watcher
	watchSeq atomic.Uint64

	closed    chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup // the accept loop, dials and link goroutines
}

type rendezvousConn struct {
	conn  net.Conn
	hello Hello
	// err, when not nil, ends the rendezvous: a rank that proved the
	// secret was started otherwise (backends.ErrDisagree).
	err error
}

func newEndpoint(rank, size int, secret []byte, cfg backends.Config, connectTimeout time.Duration) *endpoint {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	ep := &endpoint{
		rank: rank, size: size, secret: secret, connectTimeout: connectTimeout, log: log,
		links: make([]*link, size), closed: make(chan struct{}), pending: map[net.Conn]struct{}{},
		retry: cfg.Retry, bigTurn: make(chan struct{}, 1),
	}
	if ep.connectTimeout <= 0 {
		ep.connectTimeout = DefaultConnectTimeout
	}
	for p := range size {
		if p != rank {
			ep.links[p] = newLink(ep, p)
		}
	}
	return ep
}

// Rank implements backends.Transport.
func (ep *endpoint) Rank() int { return ep.rank }

// Size implements backends.Transport.
func (ep *endpoint) Size() int { return ep.size }

// BeginCall implements backends.CallTagger: messages posted from now on
// carry c, and receives expect it.
func (ep *endpoint) BeginCall(c backends.Call) { ep.call = c }

func (ep *endpoint) linkTo(peer int) (*link, error) {
	if peer < 0 || peer >= ep.size {
		return nil, fmt.Errorf("peer %d out of range [0, %d)", peer, ep.size)
	}
	if peer == ep.rank {
		return nil, fmt.Errorf("rank %d cannot message itself", peer)
	}
	return ep.links[peer], nil
}

// Send implements backends.Transport.
func (ep *endpoint) Send(peer int, buf []byte) backends.Request {
	r := ep.newRequest()
	r.send, r.buf = true, buf
	return ep.post(peer, r)
}

// Recv implements backends.Transport.
func (ep *endpoint) Recv(peer int, buf []byte) backends.Request {
	r := ep.newRequest()
	r.buf = buf
	return ep.post(peer, r)
}

// RecvReduce implements backends.Transport.
func (ep *endpoint) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	r := ep.newRequest()
	if err := backends.CheckAccumulator(peer, dst, acc); err != nil {
		r.finish(err)
		return r
	}
	r.buf, r.acc, r.reduce = dst, acc, reduce
	return ep.post(peer, r)
}

func (ep *endpoint) post(peer int, r *request) backends.Request {
	r.call = ep.call
	l, err := ep.linkTo(peer)
	if err != nil {
		dir := "recv from"
		if r.send {
			dir = "send to"
		}
		r.finish(fmt.Errorf("%s rank %d: %w", dir, peer, err))
		return r
	}
	r.l = l
	return l.post(r)
}

// Close implements backends.Transport: it stops listening, fails every
// link and waits for the endpoint's goroutines to end.
func (ep *endpoint) Close() error {
	ep.closeOnce.Do(func() {
		close(ep.closed)
		if ep.ln != nil {
			ep.ln.Close()
		}
		ep.pendingMu.Lock()
		for c := range ep.pending {
			c.Close()
		}
		ep.pendingMu.Unlock()
		for _, l := range ep.links {
			if l != nil {
				l.fail(backends.ErrClosed)
			}
		}
		if ep.ctl != nil {
			ep.ctl.shutdown()
		}
	})
	ep.wg.Wait()
	return nil
}

// Abort tells every connected peer why this rank is stopping, so that their
// errors point to where the failure began, then closes the endpoint.
func (ep *endpoint) Abort(why error) {
	for _, l := range ep.links {
		if l != nil {
			l.abort(why)
		}
	}
	ep.Close()
}

// handshake runs Handshake on conn, unless the endpoint closes first.
func (ep *endpoint) handshake(conn net.Conn, me Hello, deadline time.Time) (Hello, error) {
	ep.pendingMu.Lock()
	select {
	case <-ep.closed:
		ep.pendingMu.Unlock()
		return Hello{}, backends.ErrClosed
	default:
	}
	ep.pending[conn] = struct{}{}
	ep.pendingMu.Unlock()
	defer func() {
		ep.pendingMu.Lock()
		delete(ep.pending, conn)
		ep.pendingMu.Unlock()
	}()
	me.Agree = ep.agree
	return Handshake(conn, ep.secret, me, deadline)
}

// writersBusy reports whether a large write of this rank is in progress.
func (ep *endpoint) writersBusy() bool { return ep.bigWrites.Load() > 0 }

// logf writes one line to the endpoint's log.
func (ep *endpoint) logf(format string, args ...any) {
	fmt.Fprintf(ep.log, "hccl-test: tcp rank %d: "+format+"\n", append([]any{ep.rank}, args...)...)
}

// acceptLoop admits peers that prove the job's secret and drops the rest,
// logging why, without disturbing the job.
func (ep *endpoint) acceptLoop() {
	defer ep.wg.Done()
	for {
		conn, err := ep.ln.Accept()
		if err != nil {
			select {
			case <-ep.closed:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			ep.logf("accept: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		ep.wg.Add(1)
		go func() {
			defer ep.wg.Done()
			ep.admit(conn)
		}()
	}
}

// admit runs the handshake on an accepted connection and hands it to the
// link or the rendezvous it is for.
func (ep *endpoint) admit(conn net.Conn) {
	tune(conn)
	me := Hello{Rank: ep.rank, Size: ep.size, Purpose: PurposeLink, Epoch: ep.epoch.Load()}
	peer, err := ep.handshake(conn, me, time.Now().Add(ep.connectTimeout))
	if errors.Is(err, backends.ErrClosed) || errors.Is(err, net.ErrClosed) {
		// The endpoint closed while the peer said hello (the run failed
		// during the rendezvous): nothing to tell.
		conn.Close()
		return
	}
	if errors.Is(err, backends.ErrDisagree) && ep.failRendezvous(err) {
		conn.Close()
		return
	}
	if err != nil {
		ep.logf("dropped connection from %s: %v", conn.RemoteAddr(), err)
		conn.Close()
		return
	}
	switch {
	case peer.Purpose == PurposeRendezvous:
		ep.rdvMu.Lock()
		ch := ep.rendezvous
		ep.rdvMu.Unlock()
		if ch != nil {
			select {
			case ch <- rendezvousConn{conn: conn, hello: peer}:
				return
			case <-ep.closed:
			}
		}
		ep.logf("dropped late rendezvous from rank %d at %s", peer.Rank, conn.RemoteAddr())
	case peer.Purpose == PurposeLink && peer.Rank >= 0 && peer.Rank < ep.rank:
		err := ep.links[peer.Rank].attach(conn, peer.Epoch)
		if err == nil {
			return
		}
		ep.logf("dropped connection from rank %d at %s: %v", peer.Rank, conn.RemoteAddr(), err)
	default:
		ep.logf("dropped connection from %s: rank %d may not dial rank %d", conn.RemoteAddr(), peer.Rank, ep.rank)
	}
	conn.Close()
}

// failRendezvous ends rank 0's rendezvous, if one is under way, with err,
// and reports whether it did. Only a peer that proved the secret gets
// here, so a stranger cannot end a job.
func (ep *endpoint) failRendezvous(err error) bool {
	ep.rdvMu.Lock()
	ch := ep.rendezvous
	ep.rdvMu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- rendezvousConn{err: err}:
		return true
	case <-ep.closed:
		return false
	}
}

// goDial connects to a higher-ranked peer in the background.
func (ep *endpoint) goDial(l *link) {
	ep.wg.Add(1)
	l.lwg.Add(1)
	go func() {
		defer ep.wg.Done()
		defer l.lwg.Done()
		// The epoch is read under the link's lock, with its state: once
		// Recover has failed the link, no dial starts, so none is ever
		// made at the epoch that follows.
		l.mu.Lock()
		failed, stop, epoch := l.err != nil, l.stop, ep.epoch.Load()
		l.mu.Unlock()
		if failed {
			return
		}
		conn, err := ep.dial(l, epoch, stop)
		if err != nil {
			l.fail(err)
			return
		}
		if l.attach(conn, epoch) != nil {
			conn.Close()
		}
	}()
}

// dial connects to l's peer's listener and proves the secret, retrying
// refused connections until the connect timeout, unless stop is closed
// first. Both sides must be at link epoch epoch.
func (ep *endpoint) dial(l *link, epoch uint32, stop <-chan struct{}) (net.Conn, error) {
	peer := l.peer
	deadline := time.Now().Add(ep.connectTimeout)
	addr := ep.addrs[peer]
	conn, err := dialRetry(addr, deadline, stop)
	if err != nil {
		return nil, fmt.Errorf("connecting to rank %d at %s: %w", peer, addr, err)
	}
	if !l.handshaking(conn) {
		conn.Close()
		return nil, fmt.Errorf("connecting to rank %d at %s: %w", peer, addr, backends.ErrClosed)
	}
	got, err := ep.handshake(conn, Hello{Rank: ep.rank, Size: ep.size, Purpose: PurposeLink, Epoch: epoch}, deadline)
	l.handshaking(nil)
	switch {
	case err != nil:
	case got.Rank != peer:
		err = fmt.Errorf("%w: the listener at %s is rank %d, not %d", backends.ErrMismatch, addr, got.Rank, peer)
	case got.Epoch != epoch:
		err = fmt.Errorf("%w: it is at link epoch %d, this rank at %d (its links were reset for a call run again)",
			backends.ErrPeerGone, got.Epoch, epoch)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to rank %d at %s: %w", peer, addr, err)
	}
	return conn, nil
}

// dialRetry dials addr until it answers or the deadline passes; a refused
// connection is retried, since the peer may still be starting.
func dialRetry(addr string, deadline time.Time, stop <-chan struct{}) (net.Conn, error) {
	for {
		d := net.Dialer{Deadline: deadline}
		conn, err := d.Dial("tcp", addr)
		if err == nil {
			tune(conn)
			return conn, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().Add(50*time.Millisecond).After(deadline) {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%w after waiting until %s: %v", backends.ErrTimeout, deadline.Format(time.TimeOnly), err)
			}
			return nil, err
		}
		select {
		case <-stop:
			return nil, backends.ErrClosed
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tune sets the socket options every connection gets.
func tune(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetReadBuffer(socketBufferSize())
		_ = tc.SetWriteBuffer(socketBufferSize())
	}
}
