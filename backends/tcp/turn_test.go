package tcp

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestWriteInTurn streams two large frames of one rank at once, the first
// to a peer that does not read for a while: the second must not wait for
// that peer (the first gives the turn up once it stalls for turnStall while
// the second waits), and both must
// arrive whole.
func TestWriteInTurn(t *testing.T) {
	const size = 32 << 20
	const stall = 3 * time.Second
	ep := &endpoint{bigTurn: make(chan struct{}, 1), closed: make(chan struct{})}
	type peer struct {
		link *link
		got  chan []byte
	}
	dial := func(wait time.Duration) peer {
		in, out := socketPair(t)
		got := make(chan []byte, 1)
		go func() {
			time.Sleep(wait)
			_ = in.SetDeadline(time.Now().Add(30 * time.Second))
			all, _ := io.ReadAll(io.LimitReader(in, HeaderSize+size))
			got <- all
		}()
		return peer{link: &link{conn: out, wr: newRawWriter(out), ep: ep}, got: got}
	}
	stalled, prompt := dial(stall), dial(0)
	hdr := bytes.Repeat([]byte{0xAB}, HeaderSize)
	payloads := [][]byte{bytes.Repeat([]byte{1, 2, 3}, size/3+1)[:size], bytes.Repeat([]byte{4, 5}, size/2)}
	done := make([]chan error, 2)
	start := time.Now()
	for i, p := range []peer{stalled, prompt} {
		done[i] = make(chan error, 1)
		go func() { done[i] <- p.link.writeInTurn(hdr, payloads[i]) }()
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // the stalled frame takes the turn first
		}
	}
	if err := <-done[1]; err != nil {
		t.Fatalf("frame to the reading peer: %v", err)
	}
	if took := time.Since(start); took >= stall {
		t.Errorf("frame to the reading peer took %v: it waited for the stalled peer (%v)", took, stall)
	}
	if err := <-done[0]; err != nil {
		t.Fatalf("frame to the stalled peer: %v", err)
	}
	for i, p := range []peer{stalled, prompt} {
		want := append(append([]byte(nil), hdr...), payloads[i]...)
		if got := <-p.got; !bytes.Equal(got, want) {
			t.Errorf("peer %d got %d bytes, not the %d sent", i, len(got), len(want))
		}
	}
}

// TestMovingFrameKeepsTurn streams two large frames of one rank at once,
// the first to a peer that reads slowly but steadily (a read every few
// milliseconds, well inside turnStall): the first keeps the turn until it
// is out, so it is written whole before the second starts, which a turn
// held for a fixed time, or given up while bytes still move, would not do.
func TestMovingFrameKeepsTurn(t *testing.T) {
	const size = 16 << 20
	defer func(d time.Duration) { turnStall = d }(turnStall)
	turnStall = 500 * time.Millisecond // far above a read's pause, even on a loaded host
	ep := &endpoint{bigTurn: make(chan struct{}, 1), closed: make(chan struct{})}
	read := func(in net.Conn, pause time.Duration, got chan<- []byte) {
		_ = in.SetDeadline(time.Now().Add(60 * time.Second))
		var all []byte
		buf := make([]byte, 64<<10)
		for len(all) < HeaderSize+size {
			n, err := in.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				break
			}
			time.Sleep(pause)
		}
		got <- all
	}
	slowIn, slowOut := socketPair(t)
	promptIn, promptOut := socketPair(t)
	slowGot, promptGot := make(chan []byte, 1), make(chan []byte, 1)
	go read(slowIn, 4*time.Millisecond, slowGot) // 16 MiB in a second or more
	go read(promptIn, 0, promptGot)
	slow := &link{conn: slowOut, wr: newRawWriter(slowOut), ep: ep}
	prompt := &link{conn: promptOut, wr: newRawWriter(promptOut), ep: ep}
	hdr := bytes.Repeat([]byte{0xCD}, HeaderSize)
	payload := bytes.Repeat([]byte{7, 8, 9, 10}, size/4)
	order := make(chan string, 2)
	errs := make(chan error, 2)
	go func() {
		errs <- slow.writeInTurn(hdr, payload)
		order <- "slow"
	}()
	for deadline := time.Now().Add(10 * time.Second); len(ep.bigTurn) == 0; { // the slow frame takes the turn first
		if time.Now().After(deadline) {
			t.Fatal("the first frame never took the turn")
		}
		time.Sleep(time.Millisecond)
	}
	go func() {
		errs <- prompt.writeInTurn(hdr, payload)
		order <- "prompt"
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if first := <-order; first != "slow" {
		t.Errorf("the frame waiting for the turn went out before the one that kept moving")
	}
	want := append(append([]byte(nil), hdr...), payload...)
	for name, got := range map[string][]byte{"slow": <-slowGot, "prompt": <-promptGot} {
		if !bytes.Equal(got, want) {
			t.Errorf("%s peer got %d bytes, not the %d sent", name, len(got), len(want))
		}
	}
}
