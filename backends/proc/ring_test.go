package proc

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// localWorld starts n ranks in this process and closes them when t ends.
func localWorld(t *testing.T, n int) []*endpoint {
	t.Helper()
	ts, err := NewLocalWorld(context.Background(), n, backends.Config{Options: tcp.Options{ConnectTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]*endpoint, n)
	for i, tr := range ts {
		eps[i] = tr.(*endpoint)
	}
	t.Cleanup(func() {
		for _, e := range eps {
			e.Close()
		}
	})
	return eps
}

// both runs f0 on rank 0 and f1 on rank 1 at once and returns their errors.
func both(f0, f1 func() error) error {
	var wg sync.WaitGroup
	var e0, e1 error
	wg.Go(func() { e0 = f0() })
	wg.Go(func() { e1 = f1() })
	wg.Wait()
	return errors.Join(e0, e1)
}

// TestRingOverflow posts more sends to one peer than its ring has slots
// before waiting on any, and receives them waiting in reverse order: the
// sends past the ring wait in a queue and go out as slots free, in order.
// A wait that missed its wake-up would sleep a slice (sleepSlice) at a
// time: the exchange is bounded by one that fits in the ring, measured
// now on this host (wallbound), not by a time.
func TestRingOverflow(t *testing.T) {
	eps := localWorld(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := wallbound.Baseline(func() {
		if err := ringExchange(t, ctx, eps, ringSlots); err != nil {
			t.Fatalf("%d messages, as many as the ring holds: %v", ringSlots, err)
		}
	})
	const n = 3*ringSlots + 5
	bound := wallbound.Bound(0, base)
	start := time.Now()
	overflowCtx, cancelOverflow := context.WithTimeout(ctx, bound)
	defer cancelOverflow()
	if err := ringExchange(t, overflowCtx, eps, n); err != nil {
		t.Fatalf("%d messages (%d took %v): %v", n, ringSlots, base, err)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("%d messages took %v, %d took %v: a wait missed its wake-up", n, took, ringSlots, base)
	}
}

// ringExchange sends n messages from rank 0 to rank 1, all posted before
// any is waited on, and receives them waiting in reverse order, checking
// that each arrived whole and in its place.
func ringExchange(t *testing.T, ctx context.Context, eps []*endpoint, n int) error {
	return both(func() error {
		var reqs []backends.Request
		for i := range n {
			reqs = append(reqs, eps[0].Send(1, backendtest.Payload(0, i, 100+i)))
		}
		for _, r := range reqs {
			if err := r.Wait(ctx); err != nil {
				return err
			}
		}
		return nil
	}, func() error {
		got := make([][]byte, n)
		var reqs []backends.Request
		for i := range n {
			got[i] = make([]byte, 100+i)
			reqs = append(reqs, eps[1].Recv(0, got[i]))
		}
		for i := n - 1; i >= 0; i-- {
			if err := reqs[i].Wait(ctx); err != nil {
				return err
			}
		}
		for i := range n {
			if !bytes.Equal(got[i], backendtest.Payload(0, i, 100+i)) {
				t.Errorf("message %d arrived changed or out of order", i)
			}
		}
		return nil
	})
}

// TestDirectFromSharedBuffers checks that a send from shared memory
// (Alloc) is read by the receiver where it is, and that one from the Go
// heap goes through a staging segment: what the pool holds afterwards.
func TestDirectFromSharedBuffers(t *testing.T) {
	eps := localWorld(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shared, free, err := Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	for _, tc := range []struct {
		name   string
		buf    []byte
		staged int // staging segments pooled after the send
	}{
		{"shared", shared, 0},
		{"heap", make([]byte, 1<<20), 1},
	} {
		copy(tc.buf, backendtest.Payload(0, 1, len(tc.buf)))
		got := make([]byte, len(tc.buf))
		err := both(func() error { return eps[0].Send(1, tc.buf).Wait(ctx) },
			func() error { return eps[1].Recv(0, got).Wait(ctx) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(got, tc.buf) {
			t.Errorf("%s: the message arrived changed", tc.name)
		}
		if n := len(eps[0].stage.free[1<<20]); n != tc.staged {
			t.Errorf("%s: %d staging segments of 1 MiB pooled, want %d", tc.name, n, tc.staged)
		}
	}
}

// TestPeerGone: a receive from a peer that closes its endpoint, and a send
// to it, fail with ErrPeerGone at once, not at their deadline; so does a
// receive on a link the peer dropped, quoting why.
func TestPeerGone(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		eps := localWorld(t, 3)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var closer sync.WaitGroup
		defer closer.Wait() // before the cleanup closes it again
		closer.Go(func() {
			time.Sleep(50 * time.Millisecond)
			eps[1].closeWith(errors.New("its body failed"))
		})
		err := eps[0].Recv(1, make([]byte, 8)).Wait(ctx)
		if !errors.Is(err, backends.ErrPeerGone) || !bytes.Contains([]byte(err.Error()), []byte("its body failed")) {
			t.Errorf("receive from a closed peer: %v, want ErrPeerGone saying why", err)
		}
		// At once, not at the deadline: the close ended the wait, and the
		// context was still live when it did.
		if ctx.Err() != nil {
			t.Errorf("the receive ended with its context (%v), not with the close", ctx.Err())
		}
		if err := eps[2].Send(1, make([]byte, 8)).Wait(ctx); !errors.Is(err, backends.ErrPeerGone) {
			t.Errorf("send to a closed peer: %v, want ErrPeerGone", err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		eps := localWorld(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var dropper sync.WaitGroup
		defer dropper.Wait()
		dropper.Go(func() {
			time.Sleep(50 * time.Millisecond)
			eps[1].DropLink(0, errors.New("dropped on purpose"))
		})
		err := eps[0].Recv(1, make([]byte, 8)).Wait(ctx)
		if !errors.Is(err, backends.ErrPeerGone) || !bytes.Contains([]byte(err.Error()), []byte("dropped on purpose")) {
			t.Errorf("receive on a dropped link: %v, want ErrPeerGone quoting why", err)
		}
		if err := eps[1].Send(0, nil).Wait(ctx); err == nil || err.Error() != "dropped on purpose" {
			t.Errorf("send on the link this rank dropped: %v, want its own error", err)
		}
	})
}
