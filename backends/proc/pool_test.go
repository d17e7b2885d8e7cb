package proc

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
)

// exchange sends a payload of n bytes (numbered i) from eps[0] to eps[1],
// waits for both sides, checks it arrived, and returns the requests.
func exchange(t *testing.T, eps []*endpoint, i, n int) (s, r backends.Request) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := backendtest.Payload(0, i, n)
	got := make([]byte, n)
	err := both(func() error {
		s = eps[0].Send(1, want)
		return s.Wait(ctx)
	}, func() error {
		r = eps[1].Recv(0, got)
		return r.Wait(ctx)
	})
	if err != nil {
		t.Fatalf("message %d: %v", i, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("message %d: wrong bytes", i)
	}
	return s, r
}

// TestReleaseReuses: a send and a receive handed back once done are the
// next ones posted, over many laps of the ring, and a message moves
// right through them; released twice, or waited on twice first, they are
// pooled once; other requests are ignored.
func TestReleaseReuses(t *testing.T) {
	eps := localWorld(t, 2)
	s, r := exchange(t, eps, 0, 64)
	for i := 1; i < 3*ringSlots; i++ {
		eps[0].Release(s)
		eps[1].Release(r)
		s2, r2 := exchange(t, eps, i, 64+i)
		if s2 != s || r2 != r {
			t.Fatalf("message %d: released requests not reused", i)
		}
	}
	// Twice waited, twice released: pooled once.
	ctx := context.Background()
	if s.Wait(ctx) != nil || r.Wait(ctx) != nil {
		t.Fatal("a second wait failed")
	}
	for range 2 {
		eps[0].Release(s)
		eps[1].Release(r)
	}
	if len(eps[0].pool.sends) != 1 || len(eps[1].pool.recvs) != 1 {
		t.Fatalf("released twice: pools of %d sends and %d receives, want 1 each", len(eps[0].pool.sends), len(eps[1].pool.recvs))
	}
	// Not this endpoint's: ignored.
	s, r = exchange(t, eps, 0, 8)
	eps[0].Release(r)
	eps[1].Release(s)
	eps[0].Release(failed{errors.New("x")})
	if len(eps[0].pool.recvs) != 0 || len(eps[1].pool.sends) != 0 {
		t.Fatalf("another endpoint's requests pooled: %d receives, %d sends", len(eps[0].pool.recvs), len(eps[1].pool.sends))
	}
}

// TestReleaseLeavesHeldRequests: a request that something still refers to
// is not reused when released: a send whose slot names it is let go of by
// the slot first; a receive completed ahead of an earlier one stays in the
// pending list; a queued send given up stays in its queue; one not done
// is left alone.
func TestReleaseLeavesHeldRequests(t *testing.T) {
	t.Run("send named by its slot", func(t *testing.T) {
		eps := localWorld(t, 2)
		s, _ := exchange(t, eps, 0, eagerMax+1) // past eager: its slot names it until reused
		p := eps[0].peers[1]
		if p.inflight[0] != s {
			t.Fatal("the slot does not name its send: the test needs another way in")
		}
		eps[0].Release(s)
		for i, x := range p.inflight {
			if x == s {
				t.Fatalf("slot %d still names the released send", i)
			}
		}
	})
	t.Run("receive behind a pending one", func(t *testing.T) {
		eps := localWorld(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a, b := make([]byte, 8), make([]byte, 8)
		r1, r2 := eps[1].Recv(0, a), eps[1].Recv(0, b)
		s1, s2 := eps[0].Send(1, backendtest.Payload(0, 1, 8)), eps[0].Send(1, backendtest.Payload(0, 2, 8))
		if err := r2.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		eps[1].Release(r2) // r1, before it, is pending
		c := make([]byte, 8)
		r3 := eps[1].Recv(0, c)
		if r3 == r2 {
			t.Fatal("a receive still pending behind another was reused")
		}
		s3 := eps[0].Send(1, backendtest.Payload(0, 3, 8))
		for _, q := range []backends.Request{r1, r3, s1, s2, s3} {
			if err := q.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i, got := range [][]byte{a, b, c} {
			if !bytes.Equal(got, backendtest.Payload(0, i+1, 8)) {
				t.Errorf("message %d: wrong bytes", i+1)
			}
		}
	})
	t.Run("queued send given up", func(t *testing.T) {
		eps := localWorld(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		var last backends.Request
		for i := range ringSlots + 1 {
			last = eps[0].Send(1, backendtest.Payload(0, i, 8))
		}
		eps[0].Release(last) // not done: left alone
		if err := last.Wait(ctx); !errors.Is(err, backends.ErrTimeout) {
			t.Fatalf("a send nobody receives: %v, want its deadline", err)
		}
		eps[0].Release(last)
		if len(eps[0].pool.sends) != 0 {
			t.Fatal("a failed send, still queued, was pooled")
		}
		if next := eps[0].Send(1, nil); next == last {
			t.Fatal("a failed send, still queued, was reused")
		}
	})
}
