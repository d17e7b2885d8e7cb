package proc

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// TestSendToAStoppedReader: a send whose receiver took its slot and then
// stopped reading it (SIGSTOP in the middle of the copy) ends at the op's
// deadline, not when the receiver runs again; a send given up before its
// deadline (a peer gave up the op) still lets a live receiver finish its
// read; without a deadline a cancelled send ends at once.
func TestSendToAStoppedReader(t *testing.T) {
	tests := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		cancel   bool // cancel the op as soon as the slot is taken
		readEnds bool // the receiver finishes its read 50 ms after taking it
		want     error
	}{
		{"deadline passes while the receiver is stopped", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, false, false, backends.ErrTimeout},
		{"given up before the deadline, the read ends", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}, true, true, nil},
		{"given up before the deadline, the receiver is stopped", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, true, false, context.Canceled},
		{"given up without a deadline, the receiver is stopped", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true, false, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eps := localWorld(t, 2)
			e, p := eps[0], eps[0].peers[1]
			req := e.Send(1, make([]byte, 4*eagerMax))
			word := e.my.u64(slotAt(p.outRing, 0) + slotState)
			// What the receiver does when it starts its read (tryTake).
			if !atomic.CompareAndSwapUint64(word, state(0, phasePosted), state(0, phaseTaken)) {
				t.Fatalf("slot state %#x, want the send posted", atomic.LoadUint64(word))
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			if tc.cancel {
				cancel()
			}
			if tc.readEnds {
				time.AfterFunc(50*time.Millisecond, func() {
					atomic.StoreUint64(word, state(0, phaseDone))
					p.ctl.bell().ring()
					e.my.bell().ring()
				})
			}
			done := make(chan error, 1)
			go func() { done <- req.Wait(ctx) }()
			select {
			case err := <-done:
				if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("send: %v, want %v", err, tc.want)
				}
			case <-time.After(30 * time.Second):
				// Far past every deadline above, however loaded the host.
				t.Fatal("the send still waits for a receiver that stopped reading, past its deadline")
			}
		})
	}
}
