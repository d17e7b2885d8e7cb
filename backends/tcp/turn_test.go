package tcp

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestWriteInTurn streams two large frames of one rank at once, the first
// to a peer that does not read for a while: the second must not wait for
// that peer (the first gives the turn up after turnHold), and both must
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
