package shm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/backends/shm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, n int) []backends.Transport {
		w := shm.NewWorld(n)
		ts := make([]backends.Transport, n)
		for r := range ts {
			ts[r] = w.Endpoint(r)
		}
		return ts
	})
}

// TestRunReportsFirstFailure checks that a failing rank's error is the one
// Run returns, and that the other ranks are released by cancellation rather
// than waiting for their own deadlines.
func TestRunReportsFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	err := shm.Backend{}.Run(context.Background(), backends.Config{Ranks: 4}, func(ctx context.Context, tr backends.Transport) error {
		if tr.Rank() == 2 {
			return boom
		}
		// Everyone else waits for a message that never comes.
		return tr.Recv((tr.Rank()+1)%tr.Size(), make([]byte, 4)).Wait(ctx)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the failing rank's error", err)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	err := shm.Backend{}.Run(context.Background(), backends.Config{Ranks: 0}, func(context.Context, backends.Transport) error { return nil })
	if err == nil {
		t.Fatal("0 ranks accepted")
	}
}

// TestRunTimeoutPlacesRanks: when a rank times out, Run's error places
// every other rank: the ones still waiting with their own errors, the ones
// that finished, and the ones that returned the group's cause from outside
// any call, named as stopped rather than repeated as the first failure
// (the hang report once listed the timed-out rank twice and lost rank 0).
func TestRunTimeoutPlacesRanks(t *testing.T) {
	first := fmt.Errorf("rank 2: %w", backends.ErrTimeout)
	err := shm.Backend{}.Run(context.Background(), backends.Config{Ranks: 4}, func(ctx context.Context, tr backends.Transport) error {
		switch tr.Rank() {
		case 2:
			return first
		case 0: // outside a call: returns what ended the group
			<-ctx.Done()
			return fmt.Errorf("faulting in buffers: %w", context.Cause(ctx))
		case 3:
			return nil
		}
		return tr.Recv(0, make([]byte, 4)).Wait(ctx)
	})
	if !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("got %v, want the timeout", err)
	}
	got := err.Error()
	for _, want := range []string{"rank 3 had finished", "rank 0 was stopped outside an op when the first failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("error lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "rank 2:"); n != 1 {
		t.Errorf("the first failure appears %d times, want once:\n%s", n, got)
	}
}
