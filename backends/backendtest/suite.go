// Package backendtest is the conformance suite every backend passes: a new
// backend gets the whole point-to-point contract of backends.Transport
// tested by calling Run from one test.
package backendtest

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
	"github.com/hccl-test/hccl-test/dtype"
)

// World starts a world of n ranks and returns one Transport per rank; it
// releases the world with t.Cleanup.
type World func(t *testing.T, n int) []backends.Transport

// Run runs every conformance test against worlds made by start.
func Run(t *testing.T, start World) {
	tests := []struct {
		name  string
		ranks int
		body  func(ctx context.Context, tr backends.Transport) error
	}{
		{"Ordered", 2, Ordered},
		{"ring exchange", 5, RingExchange},
		{"wait out of order", 2, WaitOutOfOrder},
		{"recv-reduce", 3, recvReduce},
		{"recv-reduce every type and reduction", 3, recvReduceEvery},
		{"zero length", 4, ZeroLength},
		{"length mismatch", 2, lengthMismatch},
		{"short accumulator", 2, shortAccumulator},
		{"bad peer", 2, BadPeer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := start(t, tc.ranks)
			if err := runAll(ts, 10*time.Second, tc.body); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		ts := start(t, 2)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		// Rank 1 never sends: rank 0's receive must end with ErrTimeout
		// shortly after the deadline, not hang.
		err := ts[0].Recv(1, make([]byte, 8)).Wait(ctx)
		if !errors.Is(err, backends.ErrTimeout) {
			t.Fatalf("receive from a silent peer: got %v, want ErrTimeout", err)
		}
		// A send nobody receives times out too, unless the backend
		// buffers it (a stream backend may complete it at once); it
		// never hangs.
		err = ts[1].Send(0, make([]byte, 8)).Wait(ctx)
		if err != nil && !errors.Is(err, backends.ErrTimeout) {
			t.Fatalf("send to a peer that never receives: got %v, want nil or ErrTimeout", err)
		}
	})
}

// runAll runs body on every rank at once and returns the first error.
func runAll(ts []backends.Transport, limit time.Duration, body func(context.Context, backends.Transport) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, tr := range ts {
		wg.Go(func() { errs[i] = body(ctx, tr) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d: %w", i, err)
		}
	}
	return nil
}

// Payload is the deterministic content of message seq of n bytes from rank
// from, which receivers check.
func Payload(from, seq, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from*31 + seq*7 + i)
	}
	return b
}

// Ordered: messages between a pair arrive in posting order.
func Ordered(ctx context.Context, tr backends.Transport) error {
	sizes := []int{1, 100, 4000, 70000, 1 << 20, 3}
	switch tr.Rank() {
	case 0:
		var reqs []backends.Request
		for s, n := range sizes {
			reqs = append(reqs, tr.Send(1, Payload(0, s, n)))
		}
		for _, r := range reqs {
			if err := r.Wait(ctx); err != nil {
				return err
			}
		}
	case 1:
		for s, n := range sizes {
			got := make([]byte, n)
			if err := tr.Recv(0, got).Wait(ctx); err != nil {
				return err
			}
			if !bytes.Equal(got, Payload(0, s, n)) {
				return fmt.Errorf("message %d arrived changed or out of order", s)
			}
		}
	}
	return nil
}

// RingExchange: everyone sends right and receives from the left at once.
func RingExchange(ctx context.Context, tr backends.Transport) error {
	n, r := tr.Size(), tr.Rank()
	got := make([]byte, 1<<16)
	s := tr.Send((r+1)%n, Payload(r, 0, len(got)))
	if err := errors.Join(tr.Recv((r-1+n)%n, got).Wait(ctx), s.Wait(ctx)); err != nil {
		return err
	}
	if !bytes.Equal(got, Payload((r-1+n)%n, 0, len(got))) {
		return errors.New("wrong payload from the left")
	}
	return nil
}

// WaitOutOfOrder: the second receive may be waited on before the first.
func WaitOutOfOrder(ctx context.Context, tr backends.Transport) error {
	switch tr.Rank() {
	case 0:
		a, b := tr.Send(1, Payload(0, 1, 10)), tr.Send(1, Payload(0, 2, 20000))
		return errors.Join(b.Wait(ctx), a.Wait(ctx))
	case 1:
		first, second := make([]byte, 10), make([]byte, 20000)
		r1, r2 := tr.Recv(0, first), tr.Recv(0, second)
		if err := errors.Join(r2.Wait(ctx), r1.Wait(ctx)); err != nil {
			return err
		}
		if !bytes.Equal(first, Payload(0, 1, 10)) || !bytes.Equal(second, Payload(0, 2, 20000)) {
			return errors.New("out-of-order waits mixed up the messages")
		}
	}
	return nil
}

// recvReduce: rank 0 folds both peers' vectors into its own.
func recvReduce(ctx context.Context, tr backends.Transport) error {
	const count = 1000
	vec := func(r int) []byte {
		b := make([]byte, 4*count)
		for i := range count {
			dtype.Encode(dtype.Int32, b, i, float64(r*1000+i))
		}
		return b
	}
	if tr.Rank() != 0 {
		return tr.Send(0, vec(tr.Rank())).Wait(ctx)
	}
	acc := vec(0)
	sum := dtype.Reducer(dtype.Int32, dtype.Sum)
	for peer := 1; peer < tr.Size(); peer++ {
		if err := tr.RecvReduce(peer, acc, acc, sum).Wait(ctx); err != nil {
			return err
		}
	}
	for i := range count {
		if got, want := dtype.Decode(dtype.Int32, acc, i), float64(3000+3*i); got != want {
			return fmt.Errorf("element %d: got %v, want %v", i, got, want)
		}
	}
	return nil
}

// recvReduceEvery: rank 0 folds its peers' inputs into its own with every
// data type's kernel of every reduction, fp8 and mulsum included, on
// inputs from dtype.Pattern (multiplied by each rank's scalar for mulsum),
// and the result is the pattern's expectation bit for bit. Elements are
// odd in number and the messages of several lengths, so a stream backend
// reduces them across chunk boundaries.
func recvReduceEvery(ctx context.Context, tr backends.Transport) error {
	const count = 4099
	for _, dt := range dtype.All() {
		for _, op := range dtype.AllOps() {
			p := dtype.Pattern{DType: dt, Op: op, Ranks: tr.Size()}
			mine := make([]byte, count*dt.Size())
			p.Fill(mine, tr.Rank(), 0)
			if op == dtype.MulSum {
				dtype.PreMultiply(dt, mine, mine, tr.Rank())
			}
			if tr.Rank() != 0 {
				if err := tr.Send(0, mine).Wait(ctx); err != nil {
					return fmt.Errorf("%v %v: %w", dt, op, err)
				}
				continue
			}
			reduce := dtype.Reducer(dt, op)
			for peer := 1; peer < tr.Size(); peer++ {
				if err := tr.RecvReduce(peer, mine, mine, reduce).Wait(ctx); err != nil {
					return fmt.Errorf("%v %v: %w", dt, op, err)
				}
			}
			if op == dtype.Avg {
				dtype.DivideBy(dt, mine, tr.Size())
			}
			if wrong := dtype.CountWrong(dt, mine, p.Template(-1), 0); wrong != 0 {
				return fmt.Errorf("%v %v: %d of %d elements wrong", dt, op, wrong, count)
			}
		}
	}
	return nil
}

// ZeroLength: empty messages synchronise.
func ZeroLength(ctx context.Context, tr backends.Transport) error {
	n, r := tr.Size(), tr.Rank()
	s := tr.Send((r+1)%n, nil)
	return errors.Join(tr.Recv((r-1+n)%n, nil).Wait(ctx), s.Wait(ctx))
}

// lengthMismatch: a send and receive of different lengths fail the
// receive with ErrMismatch. The send fails too where a send completes only
// once taken; a stream backend may have completed it already.
func lengthMismatch(ctx context.Context, tr backends.Transport) error {
	if tr.Rank() == 0 {
		err := tr.Send(1, make([]byte, 8)).Wait(ctx)
		if err != nil && !errors.Is(err, backends.ErrMismatch) && !errors.Is(err, backends.ErrPeerGone) {
			return fmt.Errorf("send: got %v, want success, ErrMismatch or ErrPeerGone", err)
		}
		return nil
	}
	if err := tr.Recv(0, make([]byte, 16)).Wait(ctx); !errors.Is(err, backends.ErrMismatch) {
		return fmt.Errorf("got %v, want ErrMismatch", err)
	}
	return nil
}

// shortAccumulator: a receive-and-reduce whose accumulator is shorter
// than its destination fails at once, naming the peer, with nothing sent.
func shortAccumulator(ctx context.Context, tr backends.Transport) error {
	peer := 1 - tr.Rank()
	sum := dtype.Reducer(dtype.FP32, dtype.Sum)
	err := tr.RecvReduce(peer, make([]byte, 16), make([]byte, 8), sum).Wait(ctx)
	if err == nil || errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "accumulator") ||
		!strings.Contains(err.Error(), fmt.Sprintf("rank %d", peer)) {
		return fmt.Errorf("an 8-byte accumulator for 16 bytes: got %v, want an error at once naming the accumulator and rank %d", err, peer)
	}
	return nil
}

// BadPeer: messaging oneself or a rank outside the world fails at once.
func BadPeer(ctx context.Context, tr backends.Transport) error {
	for _, peer := range []int{tr.Rank(), -1, tr.Size()} {
		if err := tr.Send(peer, nil).Wait(ctx); err == nil {
			return fmt.Errorf("send to rank %d accepted", peer)
		}
		if err := tr.Recv(peer, nil).Wait(ctx); err == nil {
			return fmt.Errorf("receive from rank %d accepted", peer)
		}
	}
	return nil
}
