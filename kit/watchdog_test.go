package kit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

func TestOpWatchdog(t *testing.T) {
	tests := []struct {
		name    string
		armed   bool
		wantErr bool
	}{
		{"an op that overruns ends the context as a timeout", true, true},
		{"time between ops does not count", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWatchdog(context.Background(), 50*time.Millisecond)
			defer w.Stop()
			if tt.armed {
				w.Arm(time.Now())
			}
			select {
			case <-w.ctx.Done():
				if !tt.wantErr {
					t.Fatal("context ended with no op running")
				}
				if err := backends.ContextError(w.ctx); !errors.Is(err, backends.ErrTimeout) {
					t.Fatalf("got %v, want ErrTimeout", err)
				}
			case <-time.After(500 * time.Millisecond):
				if tt.wantErr {
					t.Fatal("overrunning op not stopped within 10 timeouts")
				}
			}
		})
	}
}
