package proc_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/backends/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, n int) []backends.Transport {
		ts, err := proc.NewLocalWorld(context.Background(), n, backends.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, tr := range ts {
				tr.Close()
			}
		})
		return ts
	})
}
