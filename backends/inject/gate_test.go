package inject

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/sim"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// pair returns ranks 0 and 1 of a world of two on backend ("shm" or
// "sim"), each wrapped with spec's faults behind a gate.
func pair(t *testing.T, backend, spec string) (ts [2]backends.Transport, gates [2]*Gate) {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var ep func(int) backends.Transport
	switch backend {
	case "shm":
		ep = shm.NewWorld(2).Endpoint
	case "sim":
		w, err := sim.NewWorld(2, sim.LinkModel{})
		if err != nil {
			t.Fatal(err)
		}
		ep = w.Endpoint
	}
	for r := range 2 {
		ts[r], gates[r] = WrapGated(ep(r), s, 1)
	}
	return ts, gates
}

// exchange makes call seq on both ranks: rank 0 sends 8 bytes to rank 1.
// It returns both sides' errors.
func exchange(ctx context.Context, ts [2]backends.Transport, seq uint64) (send, recv error) {
	for _, t := range ts {
		t.(backends.CallTagger).BeginCall(backends.Call{Seq: seq, Op: 1, Root: -1})
	}
	s := ts[0].Send(1, make([]byte, 8))
	r := ts[1].Recv(0, make([]byte, 8))
	done := make(chan error, 1)
	go func() { done <- r.Wait(ctx) }()
	send = s.Wait(ctx)
	return send, <-done
}

// TestGateScopesFaults: faults act only on calls begun while the gate is
// open, op:N counts those calls only, and an injected failure fails the
// receiver's side too, at once, naming the fault.
func TestGateScopesFaults(t *testing.T) {
	for _, backend := range []string{"shm", "sim"} {
		t.Run(backend, func(t *testing.T) {
			ts, gates := pair(t, backend, "fail=op:2")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for seq := uint64(1); seq <= 3; seq++ { // the harness's own calls
				if s, r := exchange(ctx, ts, seq); s != nil || r != nil {
					t.Fatalf("call %d with the gate closed: %v, %v", seq, s, r)
				}
			}
			for _, g := range gates {
				g.Open(ctx, time.Minute)
			}
			if s, r := exchange(ctx, ts, 4); s != nil || r != nil {
				t.Fatalf("measured call 1: %v, %v", s, r)
			}
			s, r := exchange(ctx, ts, 5)
			for side, err := range map[string]error{"send": s, "receive": r} {
				if !errors.Is(err, ErrInjected) || !errors.Is(err, backends.ErrPeerGone) {
					t.Errorf("%s of measured call 2: %v, want an injected failure", side, err)
				}
			}
		})
	}
}

// TestHoldBounds: an injected hold ends when the gate's context does, in
// wall time, and a call whose holds would pass the op's time limit fails
// at once, naming the fault, in wall time and in virtual time alike.
func TestHoldBounds(t *testing.T) {
	tests := []struct {
		name, backend string
		limit         time.Duration
		cancelAfter   time.Duration
		want          error
	}{
		{"shm/cancelled", "shm", 0, 50 * time.Millisecond, context.Canceled},
		{"shm/past the limit", "shm", time.Second, 0, backends.ErrTimeout},
		{"sim/past the limit", "sim", time.Second, 0, backends.ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, gates := pair(t, tc.backend, "delay=1h")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, g := range gates {
				g.Open(ctx, tc.limit)
			}
			if tc.cancelAfter > 0 {
				time.AfterFunc(tc.cancelAfter, cancel)
			}
			// A hold that outlived its bound would sit for the hour: the
			// wait is bounded by the promised time plus slack scaled from
			// a call on the same backend with no fault, measured now.
			healthy, _ := pair(t, tc.backend, "delay=1ns")
			seq := uint64(0)
			base := wallbound.Baseline(func() {
				seq++
				if s, r := exchange(context.Background(), healthy, seq); s != nil || r != nil {
					t.Fatalf("a call with no hold: %v, %v", s, r)
				}
			})
			ts[0].(backends.CallTagger).BeginCall(backends.Call{Seq: 1, Op: 1, Root: -1})
			done := make(chan error, 1)
			go func() { done <- ts[0].Send(1, make([]byte, 8)).Wait(ctx) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(wallbound.Bound(tc.cancelAfter, base)):
				t.Fatalf("the hold did not end within %v (a call takes %v)", wallbound.Bound(tc.cancelAfter, base), base)
			}
			if !errors.Is(err, ErrInjected) || !errors.Is(err, tc.want) {
				t.Errorf("got %v, want an injected hold that wraps %v", err, tc.want)
			}
		})
	}
}

// TestGateCountsCorruption: Corrupted counts the messages corrupted while
// the gate was open, and none while it was closed.
func TestGateCountsCorruption(t *testing.T) {
	ts, gates := pair(t, "shm", "corrupt=p:1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exchange(ctx, ts, 1)
	if gates[0].Corrupted() != 0 {
		t.Errorf("closed gate: %d corrupted", gates[0].Corrupted())
	}
	gates[0].Open(ctx, 0)
	gates[1].Open(ctx, 0)
	exchange(ctx, ts, 2)
	exchange(ctx, ts, 3)
	if got := gates[0].Corrupted(); got != 2 {
		t.Errorf("open gate: %d corrupted, want 2", got)
	}
}
