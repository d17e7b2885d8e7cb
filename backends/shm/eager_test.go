package shm_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
)

// TestEagerAndLentInOrder mixes eager sends and sends that lend their
// buffers on one link (small and large messages, and small ones whose
// slot is still unread), with the receives waited on in random order:
// each receive gets the message of its own posting order, whichever way
// the send went.
func TestEagerAndLentInOrder(t *testing.T) {
	w := shm.NewWorld(2)
	a, b := w.Endpoint(0), w.Endpoint(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		k := 1 + rng.IntN(3*shm.EagerDepth)
		msgs := make([][]byte, k)
		for i := range msgs {
			n := 1 + rng.IntN(shm.EagerBytes)
			if rng.IntN(4) == 0 {
				n = shm.EagerBytes + 1 + rng.IntN(1000) // lends its buffer
			}
			msgs[i] = bytes.Repeat([]byte{byte(round*31 + i)}, n)
		}
		sent := make(chan error, 1)
		go func() {
			reqs := make([]backends.Request, k)
			for i, m := range msgs {
				reqs[i] = a.Send(1, m)
			}
			var first error
			for _, r := range reqs {
				if err := r.Wait(ctx); err != nil && first == nil {
					first = err
				}
			}
			sent <- first
		}()
		got := make([][]byte, k)
		recvs := make([]backends.Request, k)
		for i := range recvs {
			got[i] = make([]byte, len(msgs[i]))
			recvs[i] = b.Recv(0, got[i])
		}
		for _, i := range rng.Perm(k) {
			if err := recvs[i].Wait(ctx); err != nil {
				t.Fatalf("round %d: receive %d of %d: %v", round, i, k, err)
			}
			if !bytes.Equal(got[i], msgs[i]) {
				t.Fatalf("round %d: receive %d of %d got another message (first byte %d, want %d)", round, i, k, got[i][0], msgs[i][0])
			}
		}
		if err := <-sent; err != nil {
			t.Fatalf("round %d: send: %v", round, err)
		}
	}
}
