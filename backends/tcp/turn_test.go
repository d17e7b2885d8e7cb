package tcp

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

// turnHang is how long a turn test waits for a frame before it calls the
// wait a hang: far past what a loaded host makes a frame take, since
// what the tests check is the order frames go out in, not their speed.
const turnHang = 60 * time.Second

// turnBuffer is the socket buffer size of the turn tests' connections:
// small, so that a few MiB fill a connection whose peer does not read
// (the default loopback buffers, autotuned to several MiB, would need
// frames ten times larger, and the race detector makes every byte slow).
const turnBuffer = 64 << 10

// turnPeer is one end of a turn test's connection: the link that writes
// to it, and what its reader got.
type turnPeer struct {
	link *link
	in   net.Conn
	got  chan []byte
	// gap is the longest pause between two of the reader's reads, set
	// once got has been sent.
	gap time.Duration
}

// dialTurnPeer connects a link of ep to a reader that waits until start is
// closed, then reads n bytes, chunk at a time with pause between reads,
// into got.
func dialTurnPeer(t *testing.T, ep *endpoint, start <-chan struct{}, n, chunk int, pause time.Duration) *turnPeer {
	in, out := socketPair(t)
	_ = in.(*net.TCPConn).SetReadBuffer(turnBuffer)
	_ = out.(*net.TCPConn).SetWriteBuffer(turnBuffer)
	p := &turnPeer{link: &link{conn: out, wr: newRawWriter(out), ep: ep}, in: in, got: make(chan []byte, 1)}
	go func() {
		<-start
		all := make([]byte, n)
		last, k := time.Now(), 0
		for k < n {
			m, err := in.Read(all[k:min(n, k+chunk)])
			k += m
			now := time.Now()
			p.gap, last = max(p.gap, now.Sub(last)), now
			if err != nil {
				break
			}
			time.Sleep(pause)
		}
		p.got <- all[:k]
	}()
	return p
}

// waitTurnFrame waits for a frame's writeInTurn to return, for turnHang
// at most; on a hang it closes the peers' connections so that every
// writer and reader ends, and fails t.
func waitTurnFrame(t *testing.T, done <-chan error, what string, peers ...*turnPeer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(turnHang):
		for _, p := range peers {
			p.in.Close()
		}
		t.Fatalf("the frame to %s still waits %v later", what, turnHang)
		return nil
	}
}

// waitTurnTaken waits until a frame holds ep's turn.
func waitTurnTaken(t *testing.T, ep *endpoint) {
	t.Helper()
	for deadline := time.Now().Add(turnHang); len(ep.bigTurn) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first frame never took the turn")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteInTurn streams two large frames of one rank at once, the first
// to a peer that reads nothing until the second is out: the second must
// not wait for that peer (the first gives the turn up once it stalls for
// turnStall while the second waits), and both must arrive whole. The
// stalled peer starts reading when the second frame is out, not after a
// fixed pause, so a loaded host only slows the test: a turn never given
// up would leave the second frame waiting until turnHang.
func TestWriteInTurn(t *testing.T) {
	const size = 1 << 20 // many socket buffers
	ep := &endpoint{bigTurn: make(chan struct{}, 1), closed: make(chan struct{})}
	release, now := make(chan struct{}), make(chan struct{})
	close(now)
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	stalled := dialTurnPeer(t, ep, release, HeaderSize+size, 1<<20, 0)
	prompt := dialTurnPeer(t, ep, now, HeaderSize+size, 256<<10, 0)
	hdr := bytes.Repeat([]byte{0xAB}, HeaderSize)
	payloads := [][]byte{bytes.Repeat([]byte{1, 2, 3}, size/3+1)[:size], bytes.Repeat([]byte{4, 5}, size/2)}
	done := make([]chan error, 2)
	for i, p := range []*turnPeer{stalled, prompt} {
		done[i] = make(chan error, 1)
		go func() { done[i] <- p.link.writeInTurn(hdr, payloads[i]) }()
		if i == 0 {
			waitTurnTaken(t, ep) // the stalled frame takes the turn first
		}
	}
	err := waitTurnFrame(t, done[1], "the reading peer while the other read nothing (it waits for the stalled peer)", stalled, prompt)
	free()
	if err != nil {
		t.Fatalf("frame to the reading peer: %v", err)
	}
	if err := waitTurnFrame(t, done[0], "the stalled peer once it reads", stalled, prompt); err != nil {
		t.Fatalf("frame to the stalled peer: %v", err)
	}
	for i, p := range []*turnPeer{stalled, prompt} {
		want := append(append([]byte(nil), hdr...), payloads[i]...)
		if got := <-p.got; !bytes.Equal(got, want) {
			t.Errorf("peer %d got %d bytes, not the %d sent", i, len(got), len(want))
		}
	}
}

// TestMovingFrameKeepsTurn streams two large frames of one rank at once,
// the first to a peer that reads slowly but steadily (a small read every
// few milliseconds, well inside turnStall): the first keeps the turn until
// it is out, so it is written whole before the second starts, which a turn
// held for a fixed time, or given up while bytes still move, would not do.
// A loaded host can pause the slow reader for turnStall, when giving the
// turn up is right: such a try tells nothing and runs again with turnStall
// doubled.
func TestMovingFrameKeepsTurn(t *testing.T) {
	defer func(d time.Duration) { turnStall = d }(turnStall)
	for turnStall = 200 * time.Millisecond; ; turnStall *= 2 {
		first, gap := movingFrameFirst(t)
		if first == "slow" {
			return
		}
		if gap < turnStall {
			t.Fatalf("the frame waiting for the turn went out before the one that kept moving (its reader paused %v at most, turnStall %v)",
				gap.Round(time.Millisecond), turnStall)
		}
		if turnStall >= 5*time.Second {
			t.Fatalf("the slow reader paused %v, past turnStall %v, at every try: the host is too loaded to tell", gap, turnStall)
		}
		t.Logf("the slow reader paused %v, past turnStall %v, on a loaded host: again with turnStall doubled", gap.Round(time.Millisecond), turnStall)
	}
}

// movingFrameFirst runs TestMovingFrameKeepsTurn's two frames once and
// returns which went out first, and the slow reader's longest pause.
func movingFrameFirst(t *testing.T) (first string, gap time.Duration) {
	const size = 1 << 20
	ep := &endpoint{bigTurn: make(chan struct{}, 1), closed: make(chan struct{})}
	now := make(chan struct{})
	close(now)
	slow := dialTurnPeer(t, ep, now, HeaderSize+size, 8<<10, 4*time.Millisecond) // 1 MiB in half a second or more
	prompt := dialTurnPeer(t, ep, now, HeaderSize+size, 256<<10, 0)
	hdr := bytes.Repeat([]byte{0xCD}, HeaderSize)
	payload := bytes.Repeat([]byte{7, 8, 9, 10}, size/4)
	order := make(chan string, 2)
	errs := make(chan error, 2)
	go func() {
		err := slow.link.writeInTurn(hdr, payload)
		order <- "slow"
		errs <- err
	}()
	waitTurnTaken(t, ep) // the slow frame takes the turn first
	go func() {
		err := prompt.link.writeInTurn(hdr, payload)
		order <- "prompt"
		errs <- err
	}()
	for range 2 {
		if err := waitTurnFrame(t, errs, "either peer", slow, prompt); err != nil {
			t.Fatal(err)
		}
	}
	want := append(append([]byte(nil), hdr...), payload...)
	for name, p := range map[string]*turnPeer{"slow": slow, "prompt": prompt} {
		if got := <-p.got; !bytes.Equal(got, want) {
			t.Errorf("%s peer got %d bytes, not the %d sent", name, len(got), len(want))
		}
	}
	return <-order, slow.gap
}
