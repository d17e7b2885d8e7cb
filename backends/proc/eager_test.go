package proc

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
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
				ready := s.(backends.Readier).Ready()
				short, stop := context.WithTimeout(ctx, time.Millisecond)
				if s.Wait(short) == nil {
					eager++
					if !ready {
						t.Errorf("send %d completed at once but was not ready when posted", i)
					}
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

// TestEagerDoneRings: the receiver of an eager send rings its sender's
// doorbell only while the sender has sends queued (it waits for slots);
// the receiver of any other send always does. Sends queued behind a full
// ring raise the flag, and flushing them lowers it.
func TestEagerDoneRings(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		queued bool // the sender says it has sends queued
		rings  bool
	}{
		{"eager", 8, false, false},
		{"eager, sender waiting for slots", 8, true, true},
		{"past eager", eagerMax + 1, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eps := localWorld(t, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			eps[0].wantDone(eps[0].peers[1], tc.queued)
			s := eps[0].Send(1, make([]byte, tc.size))
			bell := eps[0].my.bell()
			before := *bell.seq
			if err := eps[1].Recv(0, make([]byte, tc.size)).Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if rang := *bell.seq != before; rang != tc.rings {
				t.Errorf("the receiver rang the sender: %v, want %v", rang, tc.rings)
			}
			if err := s.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("queue raises and lowers the flag", func(t *testing.T) {
		eps := localWorld(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		flag := eps[0].my.u32(eps[0].peers[1].outRing + ringWantDone)
		const n = ringSlots + 1
		var sends []backends.Request
		for i := range n {
			sends = append(sends, eps[0].Send(1, backendtest.Payload(0, i, 8)))
		}
		if *flag != 1 {
			t.Fatal("a send queued behind a full ring did not raise the flag")
		}
		err := both(func() error {
			for _, s := range sends {
				if err := s.Wait(ctx); err != nil {
					return err
				}
			}
			return nil
		}, func() error {
			for i := range n {
				got := make([]byte, 8)
				if err := eps[1].Recv(0, got).Wait(ctx); err != nil {
					return err
				}
				if !bytes.Equal(got, backendtest.Payload(0, i, 8)) {
					t.Errorf("message %d arrived changed", i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if *flag != 0 {
			t.Error("the queue drained but the flag stays up")
		}
	})
}

// TestEagerLayout: up to eagerHosts ranks on a host, the eager buffers to
// each receiver lie past every ring, inside the control segment and apart;
// beyond, there are none and a small send waits for its receiver.
func TestEagerLayout(t *testing.T) {
	for _, local := range []int{2, 8, eagerHosts} {
		for i := range local {
			at := eagerOut(local, i)
			if at < ringAt(local) || at+eagerSize > ctlSize(local) || i > 0 && at != eagerOut(local, i-1)+eagerSize {
				t.Errorf("%d ranks: eager buffers to rank %d at %d, outside [%d, %d) or not after the last", local, i, at, ringAt(local), ctlSize(local))
			}
		}
	}
	if at := eagerOut(eagerHosts+1, 0); at != -1 || ctlSize(eagerHosts+1) != ringAt(eagerHosts+1) {
		t.Errorf("%d ranks: eager buffers at %d, segment of %d bytes; want none", eagerHosts+1, at, ctlSize(eagerHosts+1))
	}
	eps := localWorld(t, 2)
	eps[0].peers[1].eagerOut = -1 // as on a host of too many ranks
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := eps[0].Send(1, make([]byte, 8)).Wait(ctx); err == nil {
		t.Error("a send with no eager buffers completed with no receive posted")
	}
}
