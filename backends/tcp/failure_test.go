package tcp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// Failure tests: what a rank sees when a stranger knocks on its ports or a
// peer sends bytes that are not what the protocol promises. Each case must
// end promptly with an error that names the peer, never hang.

var ftSecret = []byte("failure-test-secret")

// ftLog is a Config.Log writer that the endpoint's goroutines may write to
// while the test reads it.
type ftLog struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *ftLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *ftLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ftWaitFor polls cond every 10ms until it holds or limit passes.
func ftWaitFor(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// ftNoLeaks fails t if goroutines started during it outlive its cleanups.
func ftNoLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// ftCloseQuickly closes ep and fails t if that takes longer than
// ftPromptly: Close must not wait for connections that are still
// handshaking.
func ftCloseQuickly(t *testing.T, ep *endpoint) {
	t.Helper()
	if d, limit := ftClose(ep), ftPromptly(t); d > limit {
		t.Errorf("rank %d: Close took %v, want under %v", ep.rank, d.Round(time.Millisecond), limit)
	}
}

// ftPromptly is how long a step the tests call prompt (a close, a
// failure noticed, a vote relayed) may take on this host now: wallbound's
// slack over the quickest of three loopback connections made and closed,
// the same kind of work, rather than a time.
func ftPromptly(t *testing.T) time.Duration {
	t.Helper()
	return wallbound.Slack(wallbound.Baseline(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}))
}

// ftClose closes ep and returns how long that took.
func ftClose(ep *endpoint) time.Duration {
	start := time.Now()
	ep.Close()
	return time.Since(start)
}

// TestStrangerAtRendezvous: while rank 0 waits for rank 1, something that
// is not rank 1 connects to its rendezvous port. Rank 0 drops it, logs why,
// and the job goes on when the real rank 1 arrives.
func TestStrangerAtRendezvous(t *testing.T) {
	hello := Hello{Rank: 1, Size: 2, Purpose: PurposeRendezvous, Addr: "127.0.0.1:9", Agree: agreement("")}
	tests := []struct {
		name string
		// knock talks to rank 0 on conn and returns what the stranger
		// itself saw, if anything.
		knock func(conn net.Conn) error
		// strangerErr is what the stranger's own handshake must fail
		// with; nil when it does not handshake.
		strangerErr error
		logHas      string // what rank 0's log must say about it
	}{
		{
			name: "wrong secret",
			knock: func(conn net.Conn) error {
				_, err := Handshake(conn, []byte("another-jobs-secret"), hello, time.Now().Add(5*time.Second))
				return err
			},
			strangerErr: ErrAuth,
			logHas:      ErrAuth.Error(),
		},
		{
			name: "other world size",
			knock: func(conn net.Conn) error {
				h := hello
				h.Size = 3
				_, err := Handshake(conn, ftSecret, h, time.Now().Add(5*time.Second))
				return err
			},
			strangerErr: backends.ErrMismatch,
			logHas:      backends.ErrMismatch.Error(),
		},
		{
			name: "not a hccl-test peer",
			knock: func(conn net.Conn) error {
				_, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
				return err
			},
			logHas: ErrBadFrame.Error(),
		},
		{
			name: "cut short",
			knock: func(conn net.Conn) error {
				var hdr [HeaderSize]byte
				Header{Kind: KindHello, Len: 40}.Put(hdr[:])
				_, err := conn.Write(hdr[:HeaderSize/2])
				if cw, ok := conn.(*net.TCPConn); ok {
					cw.CloseWrite()
				}
				return err
			},
			logHas: ErrTruncated.Error(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ftNoLeaks(t)
			var log ftLog
			cfg := backends.Config{Ranks: 2, Options: Options{ConnectTimeout: 10 * time.Second}, Log: &log}
			ctx := context.Background()
			master := make(chan string, 1)
			type result struct {
				ep  *endpoint
				err error
			}
			rank0 := make(chan result, 1)
			go func() {
				ep, err := setup(ctx, role{Rank: 0, Size: 2, Master: "127.0.0.1:0", Secret: ftSecret}, cfg,
					func(m string) error { master <- m; return nil })
				rank0 <- result{ep, err}
			}()
			m := <-master

			conn, err := net.Dial("tcp", m)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			serr := tc.knock(conn)
			if tc.strangerErr != nil && !errors.Is(serr, tc.strangerErr) {
				t.Errorf("the stranger's handshake: got %v, want %v", serr, tc.strangerErr)
			}
			if !ftWaitFor(5*time.Second, func() bool { return strings.Contains(log.String(), "dropped connection") }) {
				t.Fatalf("rank 0 did not log the stranger as dropped within 5s; log:\n%s", log.String())
			}
			if l := log.String(); !strings.Contains(l, tc.logHas) || !strings.Contains(l, conn.LocalAddr().String()) {
				t.Errorf("rank 0's log should name the stranger's address %s and say %q:\n%s", conn.LocalAddr(), tc.logHas, l)
			}

			// The real rank 1 joins and the pair exchanges a message both ways.
			ep1, err := setup(ctx, role{Rank: 1, Size: 2, Master: m, Secret: ftSecret}, cfg, nil)
			if err != nil {
				t.Fatalf("rank 1 setup after the stranger: %v", err)
			}
			r0 := <-rank0
			if r0.err != nil {
				ep1.Close()
				t.Fatalf("rank 0 setup with a stranger about: %v", r0.err)
			}
			ep0 := r0.ep
			ftExchange(t, ep0, ep1)
			ftCloseQuickly(t, ep0)
			ftCloseQuickly(t, ep1)
		})
	}
}

// TestSilentStranger: a connection to rank 0 that never says a word must
// neither stop the job nor hold up rank 0's Close until the handshake
// deadline (a port scanner or health check would otherwise delay every
// exit by up to --connect-timeout, 120s by default).
func TestSilentStranger(t *testing.T) {
	ftNoLeaks(t)
	var log ftLog
	const handshakeLimit = 3 * time.Second
	cfg := backends.Config{Ranks: 2, Options: Options{ConnectTimeout: handshakeLimit}, Log: &log}
	var conn net.Conn
	eps := ftPair(t, cfg, func(master string) {
		var err error
		if conn, err = net.Dial("tcp", master); err != nil {
			t.Error(err)
		}
	})
	if conn != nil {
		defer conn.Close()
	}
	ftExchange(t, eps[0], eps[1])
	ftCloseQuickly(t, eps[1])
	if d := ftClose(eps[0]); d > ftPromptly(t) {
		// Close waits for admit, which waits for the stranger's hello
		// until the connect timeout.
		t.Errorf("rank 0's Close took %v with a silent connection open (connect timeout %v): it waits for the handshake deadline",
			d.Round(time.Millisecond), handshakeLimit)
	}
}

// ftPair sets up a 2-rank world in this process; between rank 0's start
// and rank 1's, meanwhile is called with the rendezvous address.
func ftPair(t *testing.T, cfg backends.Config, meanwhile func(master string)) [2]*endpoint {
	t.Helper()
	ctx := context.Background()
	master := make(chan string, 1)
	var eps [2]*endpoint
	var err0 error
	var wg sync.WaitGroup
	wg.Go(func() {
		eps[0], err0 = setup(ctx, role{Rank: 0, Size: 2, Master: "127.0.0.1:0", Secret: ftSecret}, cfg,
			func(m string) error { master <- m; return nil })
	})
	m := <-master
	meanwhile(m)
	var err1 error
	eps[1], err1 = setup(ctx, role{Rank: 1, Size: 2, Master: m, Secret: ftSecret}, cfg, nil)
	wg.Wait()
	if err := errors.Join(err0, err1); err != nil {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		t.Fatal(err)
	}
	return eps
}

// ftExchange sends a message each way between ep0 and ep1 and checks it.
func ftExchange(t *testing.T, ep0, ep1 *endpoint) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b := []byte("from rank 0"), []byte("from rank 1")
	gotA, gotB := make([]byte, len(a)), make([]byte, len(b))
	reqs := []backends.Request{ep1.Recv(0, gotA), ep0.Recv(1, gotB), ep0.Send(1, a), ep1.Send(0, b)}
	for _, r := range reqs {
		if err := r.Wait(ctx); err != nil {
			t.Fatalf("exchange: %v", err)
		}
	}
	if !bytes.Equal(gotA, a) || !bytes.Equal(gotB, b) {
		t.Fatalf("exchange: got %q and %q", gotA, gotB)
	}
}

// ftFakeRank0 sets up a real rank 1 of a 2-rank world whose rank 0 is the
// test: it runs the rendezvous by hand, then dials rank 1's listener and
// proves the secret as rank 0 would for a link. It returns rank 1's
// endpoint and the link connection, on which the test writes what it
// likes.
func ftFakeRank0(t *testing.T, cfg backends.Config) (*endpoint, net.Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		ep  *endpoint
		err error
	}
	rank1 := make(chan result, 1)
	go func() {
		ep, err := setup(context.Background(), role{Rank: 1, Size: 2, Master: ln.Addr().String(), Secret: ftSecret}, cfg, nil)
		rank1 <- result{ep, err}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		ln.Close()
		if r := <-rank1; r.ep != nil {
			r.ep.Close()
		}
		t.Fatalf(format, args...)
	}

	// The rendezvous, as rank 0's collect does it.
	ln.(*net.TCPListener).SetDeadline(deadline)
	rdv, err := ln.Accept()
	if err != nil {
		fail("waiting for rank 1's rendezvous: %v", err)
	}
	defer rdv.Close()
	peer, err := Handshake(rdv, ftSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Agree: agreement("")}, deadline)
	if err != nil {
		fail("rendezvous handshake: %v", err)
	}
	if peer.Rank != 1 || peer.Purpose != PurposeRendezvous {
		fail("rendezvous from %+v, want rank 1", peer)
	}
	if err := writeFrame(rdv, KindTable, encodeTable([]string{ln.Addr().String(), peer.Addr}), deadline); err != nil {
		fail("sending the table: %v", err)
	}
	r := <-rank1
	if r.err != nil {
		t.Fatalf("rank 1 setup: %v", r.err)
	}
	t.Cleanup(func() { r.ep.Close() })

	// The link: the lower rank dials.
	conn, err := net.DialTimeout("tcp", peer.Addr, time.Until(deadline))
	if err != nil {
		t.Fatalf("dialing rank 1's listener: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	got, err := Handshake(conn, ftSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Agree: agreement("")}, deadline)
	if err != nil || got.Rank != 1 {
		t.Fatalf("link handshake: got %+v, %v", got, err)
	}
	return r.ep, conn
}

// ftFrame is a frame header followed by payload bytes (as many as given,
// whatever the header claims).
func ftFrame(h Header, payload []byte) []byte {
	b := make([]byte, HeaderSize, HeaderSize+len(payload))
	h.Put(b)
	return append(b, payload...)
}

// TestBadFramesFromPeer: rank 1 is waiting for a message from rank 0, and
// rank 0 sends something else. The receive fails promptly with an error
// that names rank 0 and says what was wrong, the link stays failed, and
// Close does not hang.
func TestBadFramesFromPeer(t *testing.T) {
	call := backends.Call{Seq: 5, Op: 1, DType: 9}
	data := Header{Kind: KindData, Op: call.Op, DType: call.DType, Call: call.Seq, Seq: 0, Len: 1000}
	with := func(f func(*Header)) Header { h := data; f(&h); return h }
	garbage := bytes.Repeat([]byte("garbage!"), HeaderSize/8)
	tests := []struct {
		name  string
		bytes []byte
		close bool    // close the connection after the bytes
		want  []error // the receive's error wraps one of these
		has   []string
	}{
		{"truncated payload", ftFrame(data, make([]byte, 10)), true,
			[]error{backends.ErrPeerGone, ErrTruncated}, []string{"rank 0", "10 of 1000"}},
		{"truncated header", ftFrame(data, nil)[:HeaderSize-7], true,
			[]error{backends.ErrPeerGone, ErrTruncated}, []string{"rank 0", "25 of 32"}},
		{"closed between frames", nil, true,
			[]error{backends.ErrPeerGone}, []string{"rank 0", "closed"}},
		{"garbage header", garbage, false,
			[]error{ErrBadFrame}, []string{"rank 0", "magic"}},
		{"other protocol version", func() []byte { b := ftFrame(data, nil); b[2] = ProtocolVersion + 1; return b }(), false,
			[]error{ErrBadFrame}, []string{"rank 0", "version"}},
		{"oversized length", ftFrame(with(func(h *Header) { h.Len = MaxPayload + 1 }), nil), false,
			[]error{ErrBadFrame}, []string{"rank 0"}},
		{"handshake frame after the handshake", ftFrame(Header{Kind: KindHello, Len: 0}, nil), false,
			[]error{ErrBadFrame}, []string{"rank 0", "hello"}},
		{"frame out of sequence", ftFrame(with(func(h *Header) { h.Seq = 1 }), make([]byte, 1000)), false,
			[]error{ErrBadFrame}, []string{"rank 0", "#1"}},
		{"wrong call", ftFrame(with(func(h *Header) { h.Call = 6 }), make([]byte, 1000)), false,
			[]error{backends.ErrMismatch}, []string{"rank 0", "op #6", "op #5"}},
		{"wrong op", ftFrame(with(func(h *Header) { h.Op = 2 }), make([]byte, 1000)), false,
			[]error{backends.ErrMismatch}, []string{"rank 0", "op #5"}},
		{"wrong length", ftFrame(with(func(h *Header) { h.Len = 999 }), make([]byte, 999)), false,
			[]error{backends.ErrMismatch}, []string{"rank 0", "999", "1000"}},
		{"abort", ftFrame(Header{Kind: KindAbort, Len: 4}, []byte("boom")), false,
			[]error{backends.ErrPeerGone}, []string{"rank 0 stopped: boom"}},
		// A peer that stopped for a mismatch makes the error a mismatch
		// too: re-execution must not run it again.
		{"abort for a mismatch", ftFrame(Header{Kind: KindAbort, Op: AbortMismatch, Len: 3}, []byte("odd")), false,
			[]error{backends.ErrMismatch}, []string{"peer gone: rank 0 stopped: odd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ftNoLeaks(t)
			ep1, conn := ftFakeRank0(t, backends.Config{Ranks: 2, Options: Options{ConnectTimeout: 10 * time.Second}})
			ep1.BeginCall(call)
			req := ep1.Recv(0, make([]byte, 1000))
			if _, err := conn.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.close {
				conn.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			err := req.Wait(ctx)
			if errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("the receive hung: %v", err)
			}
			if d, limit := time.Since(start), ftPromptly(t); d > limit {
				t.Errorf("the receive failed after %v, want promptly (%v on this host's load)", d.Round(time.Millisecond), limit)
			}
			wraps := false
			for _, w := range tc.want {
				wraps = wraps || errors.Is(err, w)
			}
			if !wraps {
				t.Errorf("got %v, want an error wrapping one of %v", err, tc.want)
			}
			for _, s := range tc.has {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v does not mention %q", err, s)
				}
			}
			// The link is dead: the next request fails at once, the same way.
			if err2 := ep1.Recv(0, make([]byte, 1)).Wait(ctx); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("a later receive got %v, want %v", err2, err)
			}
			ftCloseQuickly(t, ep1)
		})
	}
}

// TestSendDoneBeforePeerCloses: a send whose bytes the peer has received
// has succeeded, whatever happens to the connection afterwards. The last
// message of a run is followed at once by the receiver closing its end; the
// sender must not report that send as failed.
func TestSendDoneBeforePeerCloses(t *testing.T) {
	const rounds = 100
	// 8 bytes: the timings gather that ends every run; 256 KiB: a message
	// too large to be written by the poster itself.
	for _, size := range []int{8, 256 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			ftNoLeaks(t)
			failed, first := 0, error(nil)
			for range rounds {
				eps := ftPair(t, backends.Config{Ranks: 2, Options: Options{ConnectTimeout: 5 * time.Second}}, func(string) {})
				ftExchange(t, eps[0], eps[1]) // the link is up, as mid-run
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				send := eps[1].Send(0, make([]byte, size))
				if err := eps[0].Recv(1, make([]byte, size)).Wait(ctx); err != nil {
					cancel()
					eps[0].Close()
					eps[1].Close()
					t.Fatalf("receive: %v", err)
				}
				eps[0].Close() // rank 0 has all it needs and ends
				if err := send.Wait(ctx); err != nil {
					failed++
					first = cmp.Or(first, err)
				}
				cancel()
				eps[1].Close()
			}
			if failed > 0 {
				t.Errorf("%d of %d sends of %d B failed after the peer had received them, e.g.: %v", failed, rounds, size, first)
			}
		})
	}
}
