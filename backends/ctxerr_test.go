package backends

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestContextError: a finished context's error as a Request reports it:
// a deadline, or a cause that wraps ErrTimeout, is ErrTimeout; a
// cancellation says its cause (a signal, the memory guard) and still
// matches context.Canceled, and only it.
func TestContextError(t *testing.T) {
	signal := errors.New("terminated signal received")
	tests := []struct {
		name     string
		ctx      func() context.Context
		is       error
		isNot    error
		wantText string
	}{
		{"deadline", func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			_ = cancel
			return ctx
		}, ErrTimeout, context.Canceled, "timed out"},
		{"watchdog standing in for a deadline", func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(fmt.Errorf("op #3: %w", ErrTimeout))
			return ctx
		}, ErrTimeout, context.Canceled, "timed out"},
		{"cancelled by a signal", func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(signal)
			return ctx
		}, context.Canceled, signal, "terminated signal received"},
		{"cancelled by a signal, through a child context", func() context.Context {
			parent, cancel := context.WithCancelCause(context.Background())
			ctx, stop := context.WithCancel(parent)
			_ = stop
			cancel(signal)
			return ctx
		}, context.Canceled, signal, "terminated signal received"},
		{"cancelled without a cause", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, context.Canceled, ErrTimeout, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ContextError(tc.ctx())
			if !errors.Is(err, tc.is) {
				t.Errorf("%v does not match %v", err, tc.is)
			}
			if errors.Is(err, tc.isNot) {
				t.Errorf("%v matches %v", err, tc.isNot)
			}
			if err.Error() != tc.wantText {
				t.Errorf("says %q, want %q", err, tc.wantText)
			}
		})
	}
}

// TestStopCause: a rank that stops because its context was cancelled from
// outside tells its peers the cause; one that failed on its own, or whose
// context was cancelled without a cause or by a timeout, tells its error.
func TestStopCause(t *testing.T) {
	signal := errors.New("terminated signal received")
	own := errors.New("allreduce: rank 3, op #7: recv from rank 2: context canceled")
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"no error", cancelled(signal), nil, nil},
		{"failed on its own", context.Background(), own, own},
		{"stopped by a signal", cancelled(signal), own, signal},
		{"cancelled without a cause", cancelled(nil), own, own},
		{"a watchdog's timeout", cancelled(fmt.Errorf("op #7: %w", ErrTimeout)), own, own},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StopCause(tc.ctx, tc.err); got != tc.want {
				t.Errorf("StopCause = %v, want %v", got, tc.want)
			}
		})
	}
}
