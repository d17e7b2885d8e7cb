package shm

import (
	"math/rand/v2"
	"testing"
)

// TestSendQueue checks the queue against a map of ticket to send, as
// sends are posted and taken in and out of ticket order, drained and
// reset, with gaps in the tickets where sends went eagerly.
func TestSendQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		pick func(rng *rand.Rand, pending []uint64) int // index of the ticket to take
	}{
		{"in order", func(*rand.Rand, []uint64) int { return 0 }},
		{"newest first", func(_ *rand.Rand, p []uint64) int { return len(p) - 1 }},
		{"any order", func(rng *rand.Rand, p []uint64) int { return rng.IntN(len(p)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var q sendQueue
			want := map[uint64]*sendReq{}
			var pending []uint64
			next := uint64(0)
			for step := range 20000 {
				switch op := rng.IntN(100); {
				case op < 50 || len(pending) == 0:
					if rng.IntN(3) == 0 {
						next++ // an eager send's ticket, never queued
					}
					s := &sendReq{peer: int(next)}
					q.push(next, s)
					want[next], pending = s, append(pending, next)
					next++
				case op < 99:
					i := tc.pick(rng, pending)
					ticket := pending[i]
					pending = append(pending[:i], pending[i+1:]...)
					got, ok := q.take(ticket)
					if !ok || got != want[ticket] {
						t.Fatalf("step %d: take(%d) = %v, %v; want the send posted with it", step, ticket, got, ok)
					}
					delete(want, ticket)
					if _, ok := q.take(ticket); ok {
						t.Fatalf("step %d: ticket %d taken twice", step, ticket)
					}
				default:
					drained := 0
					q.drain(func(*sendReq) { drained++ })
					if drained != len(want) {
						t.Fatalf("step %d: drained %d sends, %d were queued", step, drained, len(want))
					}
					clear(want)
					pending = pending[:0]
				}
				if _, ok := q.take(next); ok {
					t.Fatalf("step %d: ticket %d taken before it was posted", step, next)
				}
			}
			q.reset()
			s := &sendReq{}
			q.push(0, s)
			if got, ok := q.take(0); !ok || got != s {
				t.Fatalf("after reset: take(0) = %v, %v", got, ok)
			}
		})
	}
}
