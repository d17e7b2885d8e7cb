package proc

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends/backendtest"
)

// TestEagerSends: a send of up to eagerMax bytes completes before its
// receive is posted, from a copy (the sender may reuse its buffer at
// once), while its eager buffer is free; past eagerSlots unread ones, and
// past eagerMax bytes, a send waits for its receiver as before. Every
// message arrives intact and in order.
func TestEagerSends(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		sends int
		eager int // how many complete with no receive posted
	}{
		{"one small", 8, 1, 1},
		{"one of eagerMax", eagerMax, 1, 1},
		{"one past eagerMax", eagerMax + 1, 1, 0},
		{"more than the eager buffers", 64, eagerSlots + 3, eagerSlots},
		{"empty", 0, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eps := localWorld(t, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			buf := make([]byte, tc.size)
			eager := 0
			for i := range tc.sends {
				copy(buf, backendtest.Payload(0, i, tc.size))
				s := eps[0].Send(1, buf)
				short, stop := context.WithTimeout(ctx, time.Millisecond)
				if s.Wait(short) == nil {
					eager++
				} else {
					// Not eager: its buffer stays ours only once the
					// receiver took it. The rest of the sends need
					// their own buffers.
					buf = make([]byte, tc.size)
				}
				stop()
			}
			if eager != tc.eager {
				t.Errorf("%d sends completed with no receive posted, want %d", eager, tc.eager)
			}
			// Sends that waited timed out, given up: their receives fail;
			// the eager ones must arrive intact.
			for i := range tc.eager {
				got := make([]byte, tc.size)
				if err := eps[1].Recv(0, got).Wait(ctx); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if !bytes.Equal(got, backendtest.Payload(0, i, tc.size)) {
					t.Errorf("message %d arrived changed", i)
				}
			}
		})
	}
}
