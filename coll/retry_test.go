package coll

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/backends/proc"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/dtype"
)

// retryWorld starts n ranks on backend, set up for re-execution, with the
// faults of spec injected.
func retryWorld(t *testing.T, ctx context.Context, backend string, n int, spec string) []backends.Transport {
	t.Helper()
	faults, err := inject.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var ts []backends.Transport
	if backend == "tcp" || backend == "proc" {
		newWorld := tcp.NewLocalWorld
		if backend == "proc" {
			newWorld = proc.NewLocalWorld
		}
		ts, err = newWorld(ctx, n, backends.Config{Options: tcp.Options{ConnectTimeout: 10 * time.Second}, Retry: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, tr := range ts {
				tr.Close()
			}
		})
	} else {
		w := shm.NewWorld(n)
		for r := range n {
			ts = append(ts, w.Endpoint(r))
		}
	}
	for r := range ts {
		ts[r] = inject.Wrap(ts[r], faults, 7)
	}
	return ts
}

// retryRun runs body on every rank of ts with a Comm under policy, and
// returns each rank's error and Comm.
func retryRun(ctx context.Context, ts []backends.Transport, policy Retry, body func(r int, c *Comm) error) ([]error, []*Comm) {
	errs := make([]error, len(ts))
	comms := make([]*Comm, len(ts))
	var wg sync.WaitGroup
	for r := range ts {
		comms[r] = NewComm(ts[r])
		comms[r].SetRetry(policy)
		wg.Go(func() { errs[r] = body(r, comms[r]) })
	}
	wg.Wait()
	return errs, comms
}

// TestRetryRecovers fails one send of the second of three calls and checks
// that every rank runs that call again once and gets the right result, in
// place (the input is restored) and out of place, on both backends.
func TestRetryRecovers(t *testing.T) {
	cases := []call{
		{op: AllReduce, algo: "ring", count: 1000, dt: dtype.FP32, redop: dtype.Sum},
		{op: AllReduce, algo: "rhd", count: 777, dt: dtype.Int32, redop: dtype.Sum, inPlace: true},
		{op: AllReduce, algo: "ring", count: 100000, dt: dtype.FP16, redop: dtype.Sum, inPlace: true},
		{op: AllGather, algo: "rd", count: 300, dt: dtype.FP64},
		{op: ReduceScatter, algo: "direct", count: 501, dt: dtype.FP32, redop: dtype.Max, inPlace: true},
		{op: Broadcast, algo: "dbtree", count: 4096, dt: dtype.Int8, root: 2},
		{op: AllToAll, algo: "pairwise", count: 64, dt: dtype.Uint16, inPlace: true},
	}
	for _, backend := range []string{"shm", "tcp", "proc"} {
		for _, c := range cases {
			c.ranks, c.backend = 4, backend
			t.Run(backend+"/"+c.String(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), callHang)
				defer cancel()
				ts := retryWorld(t, ctx, backend, c.ranks, "fail=op:2@rank=1")
				p := dtype.Pattern{DType: c.dt, Op: c.redop, Ranks: c.ranks}
				if !c.op.Reduces() {
					p.Op = dtype.Sum
				}
				errs, comms := retryRun(ctx, ts, Retry{Max: 2}, func(r int, comm *Comm) error {
					for range 3 {
						send, recv := c.buffers(p, r)
						a := &Args{Op: c.op, DType: c.dt, RedOp: c.redop, Count: c.count, Root: c.root, Send: send, Recv: recv}
						if _, err := comm.Run(ctx, c.algo, a); err != nil {
							return err
						}
						if want := c.expected(p, r); want != nil && !bytes.Equal(recv[:len(want)], want) {
							return errors.New("wrong result")
						}
					}
					return nil
				})
				for r, err := range errs {
					if err != nil {
						t.Errorf("rank %d: %v", r, err)
					} else if got := comms[r].Reruns(); got != 1 {
						t.Errorf("rank %d ran %d calls again, want 1", r, got)
					}
				}
			})
		}
	}
}

// TestRetryBarrier re-runs a barrier whose message was lost.
func TestRetryBarrier(t *testing.T) {
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callHang)
			defer cancel()
			ts := retryWorld(t, ctx, backend, 5, "fail=op:1@rank=2")
			errs, comms := retryRun(ctx, ts, Retry{Max: 1}, func(_ int, c *Comm) error { return c.Barrier(ctx) })
			for r, err := range errs {
				if err != nil || comms[r].Reruns() != 1 {
					t.Errorf("rank %d: %v after %d re-runs, want no error after 1", r, err, comms[r].Reruns())
				}
			}
		})
	}
}

// TestRetryGivesUp fails every attempt: every rank must end with the
// failure, naming the re-runs spent, long before the deadline.
func TestRetryGivesUp(t *testing.T) {
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callHang)
			defer cancel()
			ts := retryWorld(t, ctx, backend, 4, "fail=p:1@rank=1")
			errs, comms := retryRun(ctx, ts, Retry{Max: 2}, func(r int, c *Comm) error {
				_, err := c.Run(ctx, "ring", &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 64,
					Send: make([]byte, 256), Recv: make([]byte, 256)})
				return err
			})
			for r, err := range errs {
				switch {
				case err == nil:
					t.Errorf("rank %d: no error", r)
				case errors.Is(err, backends.ErrTimeout) || ctx.Err() != nil:
					t.Errorf("rank %d: %v: waited for the deadline", r, err)
				case !strings.Contains(err.Error(), "giving up after 2 re-runs"):
					t.Errorf("rank %d: %v: does not say it gave up", r, err)
				}
				if got := comms[r].Reruns(); got != 2 {
					t.Errorf("rank %d: %d re-runs, want 2", r, got)
				}
			}
			t.Logf("rank 0: %v", errs[0])
		})
	}
}

// TestRetryNotOnMismatch: ranks that disagree about a call are not helped
// by running it again; every rank fails at once, with no re-run.
func TestRetryNotOnMismatch(t *testing.T) {
	for _, backend := range []string{"shm", "tcp", "proc"} {
		t.Run(backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callHang)
			defer cancel()
			ts := retryWorld(t, ctx, backend, 3, "")
			errs, comms := retryRun(ctx, ts, Retry{Max: 3}, func(r int, c *Comm) error {
				a := &Args{Op: AllReduce, DType: dtype.FP32, RedOp: dtype.Sum, Count: 64, Send: make([]byte, 256), Recv: make([]byte, 256)}
				if r == 1 {
					a = &Args{Op: AllGather, DType: dtype.FP32, Count: 64, Send: make([]byte, 256), Recv: make([]byte, 3*256)}
				}
				_, err := c.Run(ctx, Auto, a)
				return err
			})
			for r, err := range errs {
				if err == nil || errors.Is(err, backends.ErrTimeout) || ctx.Err() != nil {
					t.Errorf("rank %d: %v, want a prompt failure", r, err)
				}
				if comms[r].Reruns() != 0 {
					t.Errorf("rank %d ran a mismatched call again", r)
				}
			}
			if !strings.Contains(errs[0].Error(), "mismatch") {
				t.Errorf("rank 0: %v: does not name the mismatch", errs[0])
			}
		})
	}
}

// plainTransport hides every optional interface of a transport.
type plainTransport struct{ backends.Transport }

// TestRetryNeedsRecoverer: a backend that cannot recover is a clear error.
func TestRetryNeedsRecoverer(t *testing.T) {
	w := shm.NewWorld(2)
	ts := []backends.Transport{plainTransport{w.Endpoint(0)}, plainTransport{w.Endpoint(1)}}
	errs, _ := retryRun(context.Background(), ts, Retry{Max: 1}, func(_ int, c *Comm) error { return c.Barrier(context.Background()) })
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "cannot run a failed call again") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// stoppedForMismatch is the error of a link whose peer stopped because of a
// mismatch (as tcp reports it): both ErrPeerGone and ErrMismatch.
type stoppedForMismatch struct{}

func (stoppedForMismatch) Error() string { return "peer gone: rank 0 stopped: mismatched message" }
func (stoppedForMismatch) Is(target error) bool {
	return target == backends.ErrPeerGone || target == backends.ErrMismatch
}

// TestVote: how a rank's attempt ended decides its vote.
func TestVote(t *testing.T) {
	c := NewComm(shm.NewWorld(1).Endpoint(0))
	gone, cancelGone := context.WithCancelCause(context.Background())
	cancelGone(backends.ErrPeerGone)
	tests := []struct {
		name string
		actx context.Context
		err  error
		want backends.Outcome
	}{
		{"done", context.Background(), nil, backends.Succeeded},
		{"link lost", context.Background(), fmt.Errorf("recv: %w", backends.ErrPeerGone), backends.Transient},
		{"stopped by another rank", gone, fmt.Errorf("recv: %w", context.Canceled), backends.Transient},
		{"mismatch", context.Background(), fmt.Errorf("recv: %w", backends.ErrMismatch), backends.Fatal},
		{"peer stopped for a mismatch", context.Background(), stoppedForMismatch{}, backends.Fatal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.vote(context.Background(), tc.actx, tc.err).Outcome; got != tc.want {
				t.Errorf("vote %v, want %v", got, tc.want)
			}
		})
	}
}

// doneRequest is a request that has completed with err.
type doneRequest struct{ err error }

func (r doneRequest) Wait(context.Context) error { return r.err }

// TestWaitAllPrefersOwnFailure: a request's own failure is reported over a
// cancellation that an earlier request met.
func TestWaitAllPrefersOwnFailure(t *testing.T) {
	c := NewComm(shm.NewWorld(1).Endpoint(0))
	cancelled := fmt.Errorf("send to rank 2: %w", context.Canceled)
	mismatch := fmt.Errorf("recv from rank 1: %w", backends.ErrMismatch)
	if err := c.waitAll(context.Background(), doneRequest{cancelled}, doneRequest{mismatch}); !errors.Is(err, backends.ErrMismatch) {
		t.Errorf("got %v, want the mismatch", err)
	}
	if err := c.waitAll(context.Background(), doneRequest{mismatch}, doneRequest{cancelled}); !errors.Is(err, backends.ErrMismatch) {
		t.Errorf("got %v, want the mismatch", err)
	}
}
