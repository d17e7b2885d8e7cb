package tcp

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hccl-test/hccl-test/backends"
)

var hsSecret = []byte("handshake-test-secret")

// hsNoLeaks fails t if goroutines started during it outlive its cleanups.
func hsNoLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// hsTransports are the connections every handshake test runs over: an
// unbuffered pipe, and loopback TCP.
var hsTransports = []struct {
	name string
	pair func(t *testing.T) (net.Conn, net.Conn)
}{
	{"pipe", func(t *testing.T) (net.Conn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b
	}},
	{"tcp", hsLoopbackPair},
}

func hsLoopbackPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c // nil if Accept failed
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		a.Close()
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

type hsResult struct {
	hello Hello
	err   error
}

// hsBoth runs Handshake on both ends of a connection at once.
func hsBoth(a, b net.Conn, secretA, secretB []byte, helloA, helloB Hello) (ra, rb hsResult) {
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	wg.Go(func() { ra.hello, ra.err = Handshake(a, secretA, helloA, deadline) })
	rb.hello, rb.err = Handshake(b, secretB, helloB, deadline)
	wg.Wait()
	return ra, rb
}

// deadlineConn records the last deadline set on a connection.
type deadlineConn struct {
	net.Conn
	last time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.last = t
	return c.Conn.SetDeadline(t)
}

func TestHandshake(t *testing.T) {
	hsNoLeaks(t)
	tests := []struct {
		name string
		a, b Hello
	}{
		{"link", Hello{Rank: 0, Size: 2, Purpose: PurposeLink}, Hello{Rank: 1, Size: 2, Purpose: PurposeLink}},
		{"rendezvous", Hello{Rank: 3, Size: 4, Purpose: PurposeRendezvous, Addr: "10.1.2.3:41234"}, Hello{Rank: 0, Size: 4, Purpose: PurposeLink}},
		{"longest addr", Hello{Rank: 7, Size: 1 << 20, Purpose: PurposeRendezvous, Addr: strings.Repeat("a", 256)}, Hello{Rank: 1<<20 - 1, Size: 1 << 20, Purpose: PurposeLink}},
	}
	for _, tr := range hsTransports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				c1, c2 := tr.pair(t)
				a, b := &deadlineConn{Conn: c1}, &deadlineConn{Conn: c2}
				ra, rb := hsBoth(a, b, hsSecret, bytes.Clone(hsSecret), tt.a, tt.b)
				if ra.err != nil || rb.err != nil {
					t.Fatalf("errors: %v; %v", ra.err, rb.err)
				}
				if ra.hello != tt.b || rb.hello != tt.a {
					t.Fatalf("got %+v and %+v, want %+v and %+v", ra.hello, rb.hello, tt.b, tt.a)
				}
				if !a.last.IsZero() || !b.last.IsZero() {
					t.Fatalf("deadlines left set: %v, %v", a.last, b.last)
				}
				// The connection carries frames from where the handshake ended.
				want := Header{Kind: KindData, Op: 3, Call: 9, Len: 0}
				go func() {
					var hdr [HeaderSize]byte
					want.Put(hdr[:])
					a.Write(hdr[:])
				}()
				var hdr [HeaderSize]byte
				if got, err := ReadHeader(b, &hdr); err != nil || got != want {
					t.Fatalf("frame after handshake: %+v, %v; want %+v", got, err, want)
				}
			})
		}
	}
}

// TestHandshakeBothRefuse checks that two real peers that disagree both
// fail, each saying why.
func TestHandshakeBothRefuse(t *testing.T) {
	hsNoLeaks(t)
	tests := []struct {
		name    string
		secretB []byte
		sizeB   int
		is      error
		want    string // in the error message
	}{
		{"wrong secret", []byte("another job's secret"), 4, ErrAuth, "claiming rank"},
		{"size mismatch", hsSecret, 3, backends.ErrMismatch, "world of"},
	}
	for _, tr := range hsTransports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				a, b := tr.pair(t)
				ra, rb := hsBoth(a, b, hsSecret, tt.secretB,
					Hello{Rank: 0, Size: 4, Purpose: PurposeLink}, Hello{Rank: 1, Size: tt.sizeB, Purpose: PurposeLink})
				for i, err := range []error{ra.err, rb.err} {
					if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
						t.Errorf("side %d: err = %v, want %v mentioning %q", i, err, tt.is, tt.want)
					}
				}
			})
		}
	}
}

func TestHandshakeRejectsBadArguments(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	link := Hello{Rank: 0, Size: 2, Purpose: PurposeLink}
	tests := []struct {
		name   string
		secret []byte
		me     Hello
		want   string
	}{
		{"empty secret", nil, link, "empty secret"},
		{"size 0", hsSecret, Hello{Size: 0, Purpose: PurposeLink}, "world size 0"},
		{"rank = size", hsSecret, Hello{Rank: 2, Size: 2, Purpose: PurposeLink}, "rank 2 out of range"},
		{"negative rank", hsSecret, Hello{Rank: -1, Size: 2, Purpose: PurposeLink}, "rank -1 out of range"},
		{"purpose 0", hsSecret, Hello{Rank: 0, Size: 2}, "unknown purpose 0"},
		{"long addr", hsSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeRendezvous, Addr: strings.Repeat("a", 257)}, "address of 257 bytes"},
		{"long agreement", hsSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Agree: strings.Repeat("a", 256)}, "agreement of 256 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Nothing reads b: a Handshake that wrote would block until the deadline.
			_, err := Handshake(a, tt.secret, tt.me, time.Now().Add(5*time.Second))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// hsHelloFrame is a hello frame for h, written from the protocol's
// description rather than with appendHello.
func hsHelloFrame(nonce byte, h Hello) []byte {
	p := append(bytes.Repeat([]byte{nonce}, 16),
		byte(h.Rank), byte(h.Rank>>8), byte(h.Rank>>16), byte(h.Rank>>24),
		byte(h.Size), byte(h.Size>>8), byte(h.Size>>16), byte(h.Size>>24),
		byte(h.Purpose), byte(len(h.Addr)), byte(len(h.Addr)>>8))
	p = append(p, h.Addr...)
	p = append(p, byte(h.Epoch), byte(h.Epoch>>8), byte(h.Epoch>>16), byte(h.Epoch>>24))
	p = append(p, byte(len(h.Agree)))
	p = append(p, h.Agree...)
	return hsFrame(Header{Kind: KindHello, Len: uint64(len(p))}, p)
}

func hsFrame(h Header, payload []byte) []byte {
	b := make([]byte, HeaderSize, HeaderSize+len(payload))
	h.Put(b)
	return append(b, payload...)
}

// hsProof computes a proof from the protocol's description.
func hsProof(secret []byte, purpose Purpose, rank uint32, receiverNonce, senderNonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("hccl-test/2 proof"))
	m.Write([]byte{byte(purpose)})
	m.Write(binary.LittleEndian.AppendUint32(nil, rank))
	m.Write(receiverNonce)
	m.Write(senderNonce)
	return m.Sum(nil)
}

// hsReferencePeer speaks the handshake as the protocol's description has
// it, as rank 1 of 2, and reports what it found wrong with the other side.
func hsReferencePeer(conn net.Conn, secret []byte, result chan<- error) {
	myNonce := bytes.Repeat([]byte{0xab}, 16)
	conn.Write(hsHelloFrame(0xab, Hello{Rank: 1, Size: 2, Purpose: PurposeLink}))
	// The other side's hello (no addr, no agreement: 32 bytes) and proof.
	in := make([]byte, HeaderSize+32+HeaderSize+32)
	if _, err := io.ReadFull(conn, in); err != nil {
		result <- err
		return
	}
	hello, proof := in[HeaderSize:HeaderSize+32], in[2*HeaderSize+32:]
	peerNonce := hello[:16]
	conn.Write(hsFrame(Header{Kind: KindProof, Seq: 1, Len: 32}, hsProof(secret, PurposeLink, 1, peerNonce, myNonce)))
	want := hsProof(secret, Purpose(hello[24]), binary.LittleEndian.Uint32(hello[16:20]), myNonce, peerNonce)
	switch {
	case !bytes.Equal(in[:4], []byte{'H', 'T', 2, byte(KindHello)}):
		result <- fmt.Errorf("hello header % x", in[:HeaderSize])
	case !bytes.Equal(in[HeaderSize+32:][:4], []byte{'H', 'T', 2, byte(KindProof)}):
		result <- fmt.Errorf("proof header % x", in[HeaderSize+32:][:HeaderSize])
	case !hmac.Equal(proof, want):
		result <- errors.New("wrong proof")
	default:
		result <- nil
	}
}

func TestHandshakeReferencePeer(t *testing.T) {
	hsNoLeaks(t)
	for _, tr := range hsTransports {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			result := make(chan error, 1)
			go hsReferencePeer(b, hsSecret, result)
			got, err := Handshake(a, hsSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink}, time.Now().Add(5*time.Second))
			if err != nil || got != (Hello{Rank: 1, Size: 2, Purpose: PurposeLink}) {
				t.Fatalf("Handshake = %+v, %v", got, err)
			}
			if err := <-result; err != nil {
				t.Fatalf("the reference peer refused: %v", err)
			}
		})
	}
}

// TestHandshakeBadPeer runs Handshake against scripted peers that break
// the protocol in one way each.
func TestHandshakeBadPeer(t *testing.T) {
	hsNoLeaks(t)
	me := Hello{Rank: 0, Size: 2, Purpose: PurposeLink}
	peer := Hello{Rank: 1, Size: 2, Purpose: PurposeLink}
	valid := hsHelloFrame(1, peer)
	version3 := bytes.Clone(valid)
	version3[2] = 3
	stall := 200 * time.Millisecond
	tests := []struct {
		name  string
		send  []byte        // what the peer sends
		close bool          // the peer closes after sending
		echo  bool          // the peer sends back what it receives
		deaf  bool          // the peer never reads
		wait  time.Duration // the deadline, if the peer stalls
		is    []error
		want  string // in the error message
	}{
		{name: "version 3", send: version3, is: []error{ErrBadFrame}, want: "peer speaks protocol version 3, this build speaks 2"},
		{name: "garbage to a deaf peer", send: bytes.Repeat([]byte("garbage!"), 8), deaf: true, is: []error{ErrBadFrame}, want: "magic"},
		{name: "garbage", send: []byte("GET / HTTP/1.1\r\nHost: rank0\r\n\r\n"), is: []error{ErrBadFrame}, want: "magic"},
		{name: "version 3 header part", send: version3[:8], is: []error{ErrBadFrame}, want: "protocol version 3"},
		{name: "proof first", send: hsFrame(Header{Kind: KindProof, Len: 32}, make([]byte, 32)), is: []error{ErrBadFrame}, want: "expected a hello"},
		{name: "hello in a call", send: hsFrame(Header{Kind: KindHello, Call: 5, Len: 32}, valid[HeaderSize:]), is: []error{ErrBadFrame}, want: "call 5"},
		{name: "hello claims 64 KiB + 1", send: hsFrame(Header{Kind: KindHello, Len: 64<<10 + 1}, nil), is: []error{ErrBadFrame}, want: "claims 65537 bytes"},
		{name: "hello claims MaxPayload", send: hsFrame(Header{Kind: KindHello, Len: MaxPayload}, nil), is: []error{ErrBadFrame}, want: "claims 1099511627776 bytes"},
		{name: "bad hello", send: hsHelloFrame(1, Hello{Rank: 2, Size: 2, Purpose: PurposeLink}), is: []error{ErrBadFrame}, want: "rank 2 out of range"},
		{name: "short proof", send: append(bytes.Clone(valid), hsFrame(Header{Kind: KindProof, Seq: 1, Len: 16}, make([]byte, 16))...), is: []error{ErrBadFrame}, want: "proof of 16 bytes"},
		{name: "wrong proof", send: append(bytes.Clone(valid), hsFrame(Header{Kind: KindProof, Seq: 1, Len: 32}, make([]byte, 32))...), is: []error{ErrAuth}, want: "rank 1"},
		{name: "echo", echo: true, is: []error{ErrAuth}, want: "claims this rank"},
		{name: "closes at once", close: true, is: []error{backends.ErrPeerGone}},
		{name: "closes after hello", send: valid, close: true, is: []error{backends.ErrPeerGone}},
		{name: "silent", wait: stall, is: []error{backends.ErrTimeout}, want: "read frame header"},
		{name: "half a header", send: valid[:16], wait: stall, is: []error{backends.ErrTimeout, ErrTruncated}, want: "got 16 of 32 header bytes"},
		{name: "half a hello", send: valid[:HeaderSize+13], wait: stall, is: []error{backends.ErrTimeout, ErrTruncated}, want: "got 13 of 32 payload bytes"},
	}
	for _, tr := range hsTransports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var wg sync.WaitGroup
				t.Cleanup(wg.Wait) // registered first, so it runs after the pair is closed
				a, b := tr.pair(t)
				if tt.echo {
					wg.Go(func() { io.Copy(b, b) })
				} else {
					if !tt.deaf {
						wg.Go(func() { io.Copy(io.Discard, b) }) // a pipe write waits for a reader
					}
					wg.Go(func() {
						b.Write(tt.send)
						if tt.close {
							b.Close()
						}
					})
				}
				wait := tt.wait
				if wait == 0 {
					wait = 10 * time.Second // failing without waiting for it
				}
				start := time.Now()
				_, err := Handshake(a, hsSecret, me, start.Add(wait))
				took := time.Since(start)
				for _, target := range tt.is {
					if !errors.Is(err, target) {
						t.Errorf("err = %v, want one wrapping %v", err, target)
					}
				}
				if err != nil && !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %q, want it to mention %q", err, tt.want)
				}
				if tt.wait == 0 && (errors.Is(err, backends.ErrTimeout) || took > wait/2) {
					t.Errorf("waited %v for the deadline: %v", took, err)
				}
				if tt.wait != 0 && took < tt.wait-10*time.Millisecond {
					t.Errorf("failed after %v, before the %v deadline", took, tt.wait)
				}
			})
		}
	}
}

func TestHelloPayload(t *testing.T) {
	nonce := [nonceSize]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	h := Hello{Rank: 0x0102, Size: 0x030405, Purpose: PurposeRendezvous, Addr: "h:1", Epoch: 0x0a0b0c0d, Agree: "ab"}
	want := append(nonce[:], 0x02, 0x01, 0, 0, 0x05, 0x04, 0x03, 0, 1, 3, 0, 'h', ':', '1', 0x0d, 0x0c, 0x0b, 0x0a, 2, 'a', 'b')
	if got := appendHello(nil, &nonce, h); !bytes.Equal(got, want) {
		t.Fatalf("appendHello =\n% x\nwant\n% x", got, want)
	}
	gotNonce, got, err := parseHello(want)
	if err != nil || gotNonce != nonce || got != h {
		t.Fatalf("parseHello = %x, %+v, %v; want %x, %+v", gotNonce, got, err, nonce, h)
	}

	rejects := []struct {
		name string
		p    []byte
		want string
	}{
		{"empty", nil, "hello of 0 bytes"},
		{"no addr length", want[:25], "hello of 25 bytes"},
		{"one byte short", want[:len(want)-1], "agreement field claims 2 bytes, has 1"},
		{"no agreement", want[:len(want)-3], "claims 3 bytes, has at most 2"},
		{"no epoch", want[:31], "hello of 31 bytes, need at least 32"},
		{"trailing byte", append(bytes.Clone(want), 0), "agreement field claims 2 bytes, has 3"},
		{"addr longer than the hello", append(append(bytes.Clone(want[:25]), 9, 0), want[27:]...), "claims 9 bytes, has at most 5"},
		{"addr 257", append(append(append(bytes.Clone(want[:25]), 1, 1), bytes.Repeat([]byte{'a'}, 257)...), 0, 0, 0, 0, 0), "claims 257 bytes"},
		{"purpose 3", append(append(bytes.Clone(want[:24]), 3), want[25:]...), "unknown purpose 3"},
		{"size 0", append(append(bytes.Clone(want[:20]), 0, 0, 0, 0), want[24:]...), "world size 0"},
		{"rank = size", append(append(bytes.Clone(want[:16]), 5, 4, 3, 0), want[20:]...), "rank 197637 out of range"},
	}
	for _, tt := range rejects {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseHello(tt.p)
			if !errors.Is(err, ErrBadFrame) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrBadFrame mentioning %q", err, tt.want)
			}
		})
	}
}

// FuzzHello checks that the hello decoder never panics, rejects only with
// ErrBadFrame, and accepts only what appendHello writes back byte for byte.
func FuzzHello(f *testing.F) {
	var nonce [nonceSize]byte
	for _, h := range []Hello{
		{Rank: 0, Size: 1, Purpose: PurposeLink},
		{Rank: 3, Size: 4, Purpose: PurposeRendezvous, Addr: "127.0.0.1:40000"},
		{Rank: 1, Size: 2, Purpose: PurposeRendezvous, Addr: strings.Repeat("x", maxAddrLen)},
		{Rank: 1, Size: 2, Purpose: PurposeLink, Epoch: 1<<32 - 1},
		{Rank: 1, Size: 2, Purpose: PurposeLink, Agree: "--backend proc"},
		{Rank: 1, Size: 2, Purpose: PurposeLink, Addr: "a:1", Agree: strings.Repeat("y", maxAgreeLen)},
	} {
		p := appendHello(nil, &nonce, h)
		f.Add(p)
		f.Add(p[:len(p)-1])
		f.Add(append(p, 0))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		n, h, err := parseHello(p)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("rejection %v does not wrap ErrBadFrame", err)
			}
			return
		}
		if err := h.validate(); err != nil {
			t.Fatalf("accepted an invalid hello %+v: %v", h, err)
		}
		if out := appendHello(nil, &n, h); !bytes.Equal(out, p) {
			t.Fatalf("appendHello(parseHello(p)) =\n% x\np =\n% x", out, p)
		}
	})
}
