package shm_test

import (
	"context"
	"errors"
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
