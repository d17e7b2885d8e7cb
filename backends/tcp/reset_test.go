package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
)

// Recovery tests, part 2: a call fails on a dropped link, the links are
// reset, and the call runs again over them; the link epoch that keeps
// connections from before a reset out.

// rcPatterns caches backendtest.Payload(from, 0, n) by from and n: made
// byte by byte, a large one is slow under the race detector.
var rcPatterns sync.Map

// rcPattern is backendtest.Payload(from, 0, n), shared: it must not be
// changed.
func rcPattern(from, n int) []byte {
	key := [2]int{from, n}
	p, ok := rcPatterns.Load(key)
	if !ok {
		p, _ = rcPatterns.LoadOrStore(key, backendtest.Payload(from, 0, n))
	}
	return p.([]byte)
}

// rcMessage is what rank from sends in call seq: n bytes of a pattern
// that depends on from, with seq in the first 8.
func rcMessage(from int, seq uint64, n int) []byte {
	b := bytes.Clone(rcPattern(from, n))
	if n >= 8 {
		binary.LittleEndian.PutUint64(b, seq)
	}
	return b
}

// rcPair: rank from sends n bytes of its pattern to rank to, which checks
// them. The pattern goes out as it is, uncopied: a large message costs
// the race detector dearly.
func rcPair(from, to, n int) rcAttempt {
	return func(ctx context.Context, ep *endpoint, seq uint64) error {
		switch ep.rank {
		case from:
			return ep.Send(to, rcPattern(from, n)).Wait(ctx)
		case to:
			got := make([]byte, n)
			if err := ep.Recv(from, got).Wait(ctx); err != nil {
				return err
			}
			if !bytes.Equal(got, rcPattern(from, n)) {
				return fmt.Errorf("op #%d: wrong bytes from rank %d", seq, from)
			}
		}
		return nil
	}
}

// rcShift: every rank sends to the rank k places on and receives from the
// one k places back, and checks what it got.
func rcShift(k, n int) rcAttempt {
	return func(ctx context.Context, ep *endpoint, seq uint64) error {
		me, size := ep.rank, ep.size
		from := (me - k + size) % size
		got := make([]byte, n)
		s := ep.Send((me+k)%size, rcMessage(me, seq, n))
		if err := errors.Join(ep.Recv(from, got).Wait(ctx), s.Wait(ctx)); err != nil {
			return err
		}
		if !bytes.Equal(got, rcMessage(from, seq, n)) {
			return fmt.Errorf("op #%d: wrong bytes from rank %d", seq, from)
		}
		return nil
	}
}

// rcThen runs the attempts one after the other.
func rcThen(attempts ...rcAttempt) rcAttempt {
	return func(ctx context.Context, ep *endpoint, seq uint64) error {
		for _, a := range attempts {
			if err := a(ctx, ep, seq); err != nil {
				return err
			}
		}
		return nil
	}
}

var errInjected = errors.New("injected link drop")

// rcDropAfter: the ring exchange, after which rank 1 drops its link to
// rank 2 and reports the call failed.
func rcDropAfter(n int) rcAttempt {
	ring := rcShift(1, n)
	return func(ctx context.Context, ep *endpoint, seq uint64) error {
		err := ring(ctx, ep, seq)
		if ep.rank == 1 {
			ep.DropLink(2, errInjected)
			return errors.Join(errInjected, err)
		}
		return err
	}
}

// rcDropInFlight: rank 1 sends n bytes to rank 2 and drops the link while
// they are on their way; rank 2 asks for them only after the drop. It
// counts in inFlight the drops that cut a write short.
func rcDropInFlight(n int, inFlight *atomic.Int32) rcAttempt {
	var mu sync.Mutex
	dropped := map[uint64]chan struct{}{}
	signal := func(seq uint64) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if dropped[seq] == nil {
			dropped[seq] = make(chan struct{})
		}
		return dropped[seq]
	}
	return func(ctx context.Context, ep *endpoint, seq uint64) error {
		switch ep.rank {
		case 1:
			s := ep.Send(2, rcPattern(1, n))
			// Once the writer has started, it fills the sockets and
			// waits for a reader that does not come.
			ftWaitFor(2*time.Second, func() bool { return ep.bigWrites.Load() > 0 })
			time.Sleep(20 * time.Millisecond)
			if ep.bigWrites.Load() > 0 {
				inFlight.Add(1)
			}
			ep.DropLink(2, errInjected)
			close(signal(seq))
			return errors.Join(errInjected, s.Wait(ctx))
		case 2:
			select {
			case <-signal(seq):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			return ep.Recv(1, make([]byte, n)).Wait(ctx)
		}
		return nil
	}
}

// rcFailAlone: nobody sends anything; rank 1 reports the call failed.
func rcFailAlone(ctx context.Context, ep *endpoint, seq uint64) error {
	if ep.rank == 1 {
		return errInjected
	}
	return nil
}

// TestDropAndRecover: a call fails on a dropped link, the ranks agree to
// run it again, recover, and the run goes on over the same links and
// others, with the right bytes; three times over.
func TestDropAndRecover(t *testing.T) {
	// More than the kernel buffers of a connection hold (socketBuffer
	// each way, which the kernel may double): the writer is still at it
	// when the link drops.
	const big = 16 << 20
	var inFlight atomic.Int32
	// The ring uses links 0-1, 1-2, 2-3, 3-0; the shift by 2 links 0-2 and
	// 1-3, which the failing attempts leave alone.
	ok := rcThen(rcShift(1, 4<<10), rcShift(2, 64<<10))
	tests := []struct {
		name string
		fail rcAttempt // the attempt that fails
		ok   rcAttempt // the attempt run again, which succeeds
	}{
		{"dropped after an exchange", rcDropAfter(4 << 10), ok},
		{"large message in flight", rcDropInFlight(big, &inFlight), rcThen(rcPair(1, 2, big), ok)},
		{"never connected", rcFailAlone, ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ftNoLeaks(t)
			eps := rcWorld(t, 4, nil)
			seq := uint64(0)
			for cycle := range 3 {
				seq++
				v := rcCall(t, eps, seq, tt.fail)
				// Rank 1's vote, or that of a lower rank whose attempt
				// it stopped.
				if v.Outcome != backends.Transient || !strings.Contains(v.Err, errInjected.Error()) {
					t.Fatalf("cycle %d: verdict %+v, want rank 1's transient failure", cycle, v)
				}
				rcRecover(t, eps, seq)
				seq++
				if v := rcCall(t, eps, seq, tt.ok); v.Outcome != backends.Succeeded {
					t.Fatalf("cycle %d: the call run again: verdict %+v", cycle, v)
				}
			}
		})
	}
	if n := inFlight.Load(); n != 3 {
		t.Errorf("%d of 3 drops of a %d MiB message cut its write short", n, big>>20)
	}
}

// TestHelloEpoch: each side of a handshake learns the other's link epoch.
func TestHelloEpoch(t *testing.T) {
	hsNoLeaks(t)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	deadline := time.Now().Add(5 * time.Second)
	got := make(chan Hello, 1)
	go func() {
		h, _ := Handshake(b, testSecret, Hello{Rank: 1, Size: 2, Purpose: PurposeLink, Epoch: 7}, deadline)
		got <- h
	}()
	h, err := Handshake(a, testSecret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Epoch: 1 << 31}, deadline)
	if err != nil || h.Epoch != 7 {
		t.Fatalf("rank 0 saw %+v, %v; want epoch 7", h, err)
	}
	if h := <-got; h.Epoch != 1<<31 {
		t.Fatalf("rank 1 saw %+v, want epoch 1<<31", h)
	}
}

// TestStaleEpoch: a link connection made at another epoch than this
// rank's is refused on either side, and the link connects afterwards.
func TestStaleEpoch(t *testing.T) {
	t.Run("acceptor", func(t *testing.T) {
		ftNoLeaks(t)
		var log ftLog
		eps := rcWorld(t, 2, &log)
		// Rank 0 as it was before a reset that rank 1 has been through.
		eps[1].epoch.Store(1)
		conn, err := net.Dial("tcp", eps[1].addrs[1])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		h, err := Handshake(conn, eps[0].secret, Hello{Rank: 0, Size: 2, Purpose: PurposeLink, Agree: agreement("")}, time.Now().Add(5*time.Second))
		if err != nil || h.Epoch != 1 {
			t.Fatalf("handshake = %+v, %v; want rank 1 at epoch 1", h, err)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("rank 1 kept the stale connection: read %d, %v", n, err)
		}
		if !ftWaitFor(5*time.Second, func() bool { return strings.Contains(log.String(), "epoch 0, the links are at 1") }) {
			t.Errorf("rank 1 did not log the stale connection; log:\n%s", log.String())
		}
		eps[0].epoch.Store(1)
		ftExchange(t, eps[0], eps[1])
	})
	t.Run("dialer", func(t *testing.T) {
		ftNoLeaks(t)
		eps := rcWorld(t, 2, nil)
		eps[0].epoch.Store(1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := eps[0].Send(1, []byte{1}).Wait(ctx)
		if !errors.Is(err, backends.ErrPeerGone) || !strings.Contains(err.Error(), "epoch 0, this rank at 1") {
			t.Fatalf("send to a rank at another epoch: got %v, want ErrPeerGone naming both epochs", err)
		}
	})
}
