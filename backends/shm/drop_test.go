package shm_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
)

// TestDropLink: a dropped link fails, at once and on both sides, a
// receive already waiting on it, a send not yet taken, and what is posted
// later; recovering makes it carry messages again, none left from before
// (an eager copy never read included).
func TestDropLink(t *testing.T) {
	w := shm.NewWorld(3)
	a, b := w.Endpoint(0), w.Endpoint(1)
	drop := errors.New("dropped on purpose")

	// Sent eagerly to rank 2, done at once, and never received: its copy
	// waits in that link's first slot until the ranks recover.
	c := w.Endpoint(2)
	if err := a.Send(2, []byte{9, 9, 9}).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	waiting := b.Recv(0, make([]byte, 8)) // waits for a send that never comes
	// Never received; larger than an eager send, which would have
	// completed when posted.
	queued := b.Send(0, make([]byte, shm.EagerBytes+1))
	failed := make(chan error, 2)
	go func() { failed <- waiting.Wait(context.Background()) }()
	go func() { failed <- queued.Wait(context.Background()) }()
	time.Sleep(10 * time.Millisecond) // let both park
	a.(backends.LinkDropper).DropLink(1, drop)
	for range 2 {
		select {
		case err := <-failed:
			if !errors.Is(err, drop) {
				t.Errorf("pending request failed with %v, want the drop's error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a request pending on the dropped link still waits")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, r := range map[string]backends.Request{
		"send from the dropping side": a.Send(1, make([]byte, 8)),
		"receive on the other side":   b.Recv(0, make([]byte, 8)),
	} {
		if err := r.Wait(ctx); !errors.Is(err, drop) {
			t.Errorf("%s posted after the drop: %v, want the drop's error", name, err)
		}
	}

	// Every rank recovers (as after a verdict), then the link works again.
	errs := make(chan error, 3)
	for r := range 3 {
		go func() { errs <- w.Endpoint(r).(backends.Recoverer).Recover(ctx, 1) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	buf := []byte{1, 2, 3}
	for _, to := range []backends.Transport{b, c} {
		got := make([]byte, 3)
		s, r := a.Send(to.Rank(), buf), to.Recv(0, got)
		if err := errors.Join(r.Wait(ctx), s.Wait(ctx)); err != nil || !bytes.Equal(got, buf) {
			t.Fatalf("after recovering, rank %d: %v, got %v", to.Rank(), err, got)
		}
	}
}
