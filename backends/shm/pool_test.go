package shm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
)

// big returns a message of n bytes past the eager limit, so that its send
// request is the sender's own (an eager send's is not).
func big(s string) []byte { return append([]byte(s), make([]byte, shm.EagerBytes)...) }

// exchangeOnce sends msg from a to b and returns both requests, waited.
func exchangeOnce(t *testing.T, a, b backends.Transport, msg []byte) (send, recv backends.Request, got []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got = make([]byte, len(msg))
	send = a.Send(b.Rank(), msg)
	recv = b.Recv(a.Rank(), got)
	if err := recv.Wait(ctx); err != nil {
		t.Fatalf("recv: %v", err)
	}
	if err := send.Wait(ctx); err != nil {
		t.Fatalf("send: %v", err)
	}
	return send, recv, got
}

// TestReleaseReuses checks that requests handed back once they are done
// are the ones the next posts return, and still carry the right bytes;
// and that requests something may still refer to, or another rank made,
// are not reused.
func TestReleaseReuses(t *testing.T) {
	w := shm.NewWorld(2)
	a, b := w.Endpoint(0), w.Endpoint(1)
	relA, relB := a.(backends.Releaser), b.(backends.Releaser)

	t.Run("done requests come back", func(t *testing.T) {
		s1, r1, _ := exchangeOnce(t, a, b, big("first"))
		relA.Release(s1)
		relB.Release(r1)
		s2, r2, got := exchangeOnce(t, a, b, big("again"))
		if s2 != s1 || r2 != r1 {
			t.Errorf("released requests not reused: send %p then %p, recv %p then %p", s1, s2, r1, r2)
		}
		if string(got[:5]) != "again" {
			t.Errorf("reused requests delivered %q, want %q", got, "again")
		}
		relA.Release(s2)
		relB.Release(r2)
	})

	t.Run("another rank's requests are left alone", func(t *testing.T) {
		s1, r1, _ := exchangeOnce(t, a, b, big("x"))
		relB.Release(s1) // a's send, handed to b
		relA.Release(r1) // b's receive, handed to a
		// Now a receives and b sends: a request each made from the
		// wrong pool would be the one released to it.
		s2, r2, got := exchangeOnce(t, b, a, big("y"))
		if s2 == s1 || r2 == r1 {
			t.Error("a request released to the wrong endpoint was reused")
		}
		if got[0] != 'y' {
			t.Errorf("got %q, want %q", got[0], 'y')
		}
	})

	t.Run("a receive never waited on is not reused", func(t *testing.T) {
		r1 := b.Recv(0, make([]byte, 1))
		relB.Release(r1)
		// The receive still holds its ticket: the next send matches it.
		s := a.Send(1, []byte("z"))
		r2 := b.Recv(0, make([]byte, 1))
		if r2 == r1 {
			t.Error("an unwaited receive was reused")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Sent "z" went to r1's ticket; send another for r2.
		s2 := a.Send(1, []byte("w"))
		for _, r := range []backends.Request{r1, r2, s, s2} {
			if err := r.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("an abandoned send is not reused", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s1 := a.Send(1, big("gone"))
		if err := s1.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("send waited with a cancelled context: %v, want context.Canceled", err)
		}
		relA.Release(s1)
		s2 := a.Send(1, big("next"))
		if s2 == s1 {
			t.Fatal("an abandoned send, still in the link's queue, was reused")
		}
		// The receiver meets the abandoned send first, then the next.
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer wcancel()
		if err := b.Recv(0, make([]byte, len(big("gone")))).Wait(wctx); !errors.Is(err, backends.ErrPeerGone) {
			t.Errorf("receive of the abandoned send: %v, want ErrPeerGone", err)
		}
		got := make([]byte, len(big("next")))
		if err := b.Recv(0, got).Wait(wctx); err != nil || string(got[:4]) != "next" {
			t.Errorf("receive after the abandoned send: %q, %v", got[:4], err)
		}
		if err := s2.Wait(wctx); err != nil {
			t.Error(err)
		}
	})
}

// TestEagerSends checks that a small send completes when posted, on a copy
// the sender may overwrite at once; that a link holds EagerDepth of them
// unread before a send waits for its receiver again; and that a small
// message, its requests released, allocates nothing.
func TestEagerSends(t *testing.T) {
	w := shm.NewWorld(2)
	a, b := w.Endpoint(0), w.Endpoint(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	buf := make([]byte, shm.EagerBytes)
	var sends []backends.Request
	for i := range shm.EagerDepth + 1 {
		buf[0] = byte(i)
		sends = append(sends, a.Send(1, buf))
	}
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	for i, s := range sends[:shm.EagerDepth] {
		if err := s.Wait(short); err != nil {
			t.Fatalf("eager send %d before any receive: %v", i, err)
		}
	}
	if err := sends[shm.EagerDepth].Wait(short); !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("send past the eager depth, unread: %v, want it to wait for its receiver", err)
	}
	buf[0] = 0xff // after every send was posted: no copy may see it
	got := make([]byte, shm.EagerBytes)
	for i := range shm.EagerDepth {
		if err := b.Recv(0, got).Wait(ctx); err != nil || got[0] != byte(i) {
			t.Fatalf("eager message %d: first byte %d, %v; want %d", i, got[0], err, i)
		}
	}
	// The send past the depth was abandoned by its wait: its receive fails.
	if err := b.Recv(0, got).Wait(ctx); !errors.Is(err, backends.ErrPeerGone) {
		t.Fatalf("receive of the abandoned send: %v, want ErrPeerGone", err)
	}

	relA, relB := a.(backends.Releaser), b.(backends.Releaser)
	msg, in := make([]byte, 1024), make([]byte, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		s := a.Send(1, msg)
		r := b.Recv(0, in)
		if err := errors.Join(r.Wait(ctx), s.Wait(ctx)); err != nil {
			t.Fatal(err)
		}
		relA.Release(s)
		relB.Release(r)
	})
	if allocs != 0 {
		t.Errorf("a 1 KiB message allocates %.1f times, want none", allocs)
	}
}

// TestReady checks what requests say of themselves (backends.Readier): a
// receive is ready once its send is posted, a send lending its buffer once
// the receiver is done with it, an eager send at once.
func TestReady(t *testing.T) {
	w := shm.NewWorld(2)
	a, b := w.Endpoint(0), w.Endpoint(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ready := func(r backends.Request) bool { return r.(backends.Readier).Ready() }

	in := make([]byte, shm.EagerBytes+1)
	r := b.Recv(0, in)
	if ready(r) {
		t.Error("a receive is ready before its send is posted")
	}
	s := a.Send(1, make([]byte, len(in)))
	if !ready(r) {
		t.Error("a receive is not ready once its send is posted")
	}
	if ready(s) {
		t.Error("a send lending its buffer is ready before it is received")
	}
	if err := r.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !ready(s) {
		t.Error("a received send is not ready")
	}
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	e := a.Send(1, []byte("small"))
	if !ready(e) {
		t.Error("an eager send is not ready at once")
	}
	if err := b.Recv(0, make([]byte, 5)).Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
