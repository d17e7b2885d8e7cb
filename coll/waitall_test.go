package coll

import (
	"context"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// slowRequest takes took to complete, and says whether it is ready
// (backends.Readier) as told.
type slowRequest struct {
	took  time.Duration
	ready bool
}

func (r slowRequest) Wait(context.Context) error { time.Sleep(r.took); return nil }
func (r slowRequest) Ready() bool                { return r.ready }

// slowTransport posts slowRequests; it counts the requests released.
type slowTransport struct {
	req      slowRequest
	released int
}

func (t *slowTransport) Rank() int                         { return 0 }
func (t *slowTransport) Size() int                         { return 2 }
func (t *slowTransport) Send(int, []byte) backends.Request { return t.req }
func (t *slowTransport) Recv(int, []byte) backends.Request { return t.req }
func (t *slowTransport) Close() error                      { return nil }
func (t *slowTransport) Release(backends.Request)          { t.released++ }
func (t *slowTransport) RecvReduce(int, []byte, []byte, dtype.ReduceFunc) backends.Request {
	return t.req
}

// TestWaitAllTimesOnlyWaits checks that a wait counts towards Waited
// unless every request said it was ready (then the clock is not read at
// all), as time (at least the requests' own, at most the call's), and that
// each request is handed back to a transport that reuses them
// (backends.Releaser) once waited on.
func TestWaitAllTimesOnlyWaits(t *testing.T) {
	const took = 20 * time.Millisecond
	for _, tc := range []struct {
		name      string
		ready     bool
		wantTimed bool
	}{
		{"ready requests are not timed", true, false},
		{"a request not ready is timed", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &slowTransport{req: slowRequest{took: took, ready: tc.ready}}
			c := NewComm(tr)
			start := time.Now()
			if err := c.exchange(context.Background(), 1, nil, 1, nil); err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			switch got := c.Waited(); {
			case tc.wantTimed && got < 2*took:
				t.Errorf("waited %v on two requests of %v each, want at least %v", got, took, 2*took)
			case got > elapsed:
				t.Errorf("waited %v in a call that took %v", got, elapsed)
			case !tc.wantTimed && got != 0:
				t.Errorf("waited %v on ready requests, want 0", got)
			}
			if tr.released != 2 {
				t.Errorf("released %d requests, want 2", tr.released)
			}
		})
	}
}
