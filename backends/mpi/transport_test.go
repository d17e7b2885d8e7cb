//go:build mpi && cgo

package mpi

// The transport's contract, checked by every rank of a world that mpirun
// starts from this test binary (TestTransportUnderMpirun): the checks of
// backendtest's conformance suite, written for one rank per process, and
// what is particular to MPI (truncation, cancelled receives, errors of the
// native collectives, Go's signal handlers after MPI_Init).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/backendtest"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/wallbound"
)

// envChild tells this test binary that mpirun started it as a rank.
const envChild = "HCCL_TEST_MPI_CHILD"

// TestTransportRank is one rank of TestTransportUnderMpirun; it skips when
// run on its own.
func TestTransportRank(t *testing.T) {
	if os.Getenv(envChild) == "" {
		t.Skip("run by TestTransportUnderMpirun as a rank of an MPI world")
	}
	b := Backend{}
	l, ok, err := b.LaunchedWorld(backends.Config{Ranks: 1})
	if err != nil || !ok {
		t.Fatalf("not started by mpirun: %v", err)
	}
	checks := []struct {
		name string
		body func(context.Context, backends.Transport) error
	}{
		{"ordered", backendtest.Ordered},
		{"ring exchange", backendtest.RingExchange},
		{"wait out of order", backendtest.WaitOutOfOrder},
		{"recv-reduce", recvReduce},
		{"zero length", backendtest.ZeroLength},
		{"length mismatch", lengthMismatch},
		{"bad peer", backendtest.BadPeer},
		{"native errors", nativeErrors},
		{"go signals", goSignals},
		{"timeout", timeout},
		{"closed", closed},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = b.Run(ctx, backends.Config{Ranks: l.Size}, func(ctx context.Context, tr backends.Transport) error {
		for _, c := range checks {
			if err := c.body(ctx, tr); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("rank %d: %v", l.Rank, err)
	}
}

// recvReduce: rank 0 folds every peer's vector into its own three ways:
// in place (acc is dst: through a temporary), into a separate dst, and
// with acc overlapping dst by half.
func recvReduce(ctx context.Context, tr backends.Transport) error {
	const count = 1000
	vec := func(r int) []byte {
		b := make([]byte, 4*(count+count/2))
		for i := range count + count/2 {
			dtype.Encode(dtype.Int32, b, i, float64(r*1000+i))
		}
		return b
	}
	if tr.Rank() != 0 {
		for range 3 {
			if err := tr.Send(0, vec(tr.Rank())[:4*count]).Wait(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	sum := dtype.Reducer(dtype.Int32, dtype.Sum)
	n := tr.Size()
	want := func(i int) float64 { return float64(n*(n-1)/2*1000 + n*i) }
	inPlace := vec(0)[:4*count]
	apart, apartDst := vec(0)[:4*count], make([]byte, 4*count)
	shifted := vec(0) // acc = elements 0.., dst = elements count/2..
	for peer := 1; peer < n; peer++ {
		if err := tr.RecvReduce(peer, inPlace, inPlace, sum).Wait(ctx); err != nil {
			return err
		}
		if err := tr.RecvReduce(peer, apartDst, apart, sum).Wait(ctx); err != nil {
			return err
		}
		copy(apart, apartDst)
		acc, dst := shifted[:4*count], shifted[4*(count/2):4*(count/2+count)]
		if err := tr.RecvReduce(peer, dst, acc, sum).Wait(ctx); err != nil {
			return err
		}
		copy(shifted, append([]byte(nil), dst...))
	}
	for i := range count {
		for name, b := range map[string][]byte{"in place": inPlace, "apart": apart, "overlapping": shifted} {
			if got := dtype.Decode(dtype.Int32, b, i); got != want(i) {
				return fmt.Errorf("%s: element %d: got %v, want %v", name, i, got, want(i))
			}
		}
	}
	return nil
}

// lengthMismatch: a longer message (MPI's truncation) and a shorter one
// fail the receive with ErrMismatch; the next message goes through.
func lengthMismatch(ctx context.Context, tr backends.Transport) error {
	switch tr.Rank() {
	case 0:
		for _, n := range []int{16, 4, 8, 100000} {
			if err := tr.Send(1, make([]byte, n)).Wait(ctx); err != nil {
				return fmt.Errorf("send of %d bytes: %w", n, err)
			}
		}
	case 1:
		for _, sent := range []int{16, 4} {
			err := tr.Recv(0, make([]byte, 8)).Wait(ctx)
			if !errors.Is(err, backends.ErrMismatch) {
				return fmt.Errorf("%d bytes into 8: got %v, want ErrMismatch", sent, err)
			}
		}
		if err := tr.Recv(0, make([]byte, 8)).Wait(ctx); err != nil {
			return fmt.Errorf("the message after the mismatches: %w", err)
		}
		acc := make([]byte, 8)
		err := tr.RecvReduce(0, acc, acc, dtype.Reducer(dtype.Uint8, dtype.Sum)).Wait(ctx)
		if !errors.Is(err, backends.ErrMismatch) {
			return fmt.Errorf("recv-reduce of 100000 bytes into 8: got %v, want ErrMismatch", err)
		}
	}
	return nil
}

// nativeErrors: calls MPI cannot serve fail before reaching MPI, on every
// rank alike, with the op and the rank in the error.
func nativeErrors(ctx context.Context, tr backends.Transport) error {
	nt := tr.(backends.Native)
	buf := make([]byte, 64)
	for _, c := range []backends.NativeCall{
		{Op: "broadcast", DType: dtype.FP32, Count: 4, Root: tr.Size(), Send: buf, Recv: buf, Rooted: true},
		{Op: "allgather", DType: dtype.FP32, Count: 16, Send: buf, Recv: buf},
		{Op: "allreduce", DType: dtype.FP32, Count: 4, Send: buf, Recv: buf, Reduces: true},
		{Op: "barrier", DType: dtype.FP32, Count: 4, Send: buf, Recv: buf},
	} {
		err := nt.RunNative(ctx, c)
		if want := fmt.Sprintf("mpi %s rank %d: ", c.Op, tr.Rank()); err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(want)) {
			return fmt.Errorf("%+v: got %v, want an error starting %q", c, err, want)
		}
	}
	// And a good call after them.
	for i := range buf {
		buf[i] = 1
	}
	if err := nt.RunNative(ctx, backends.NativeCall{Op: "allreduce", DType: dtype.Uint8, RedOp: dtype.Sum, Count: 64, Send: buf, Recv: buf,
		Reduces: true, InPlace: true}); err != nil {
		return err
	}
	if buf[63] != byte(tr.Size()) {
		return fmt.Errorf("in-place allreduce of ones gave %d, want %d", buf[63], tr.Size())
	}
	return nil
}

// goSignals: after MPI_Init, a nil dereference is still a Go panic that
// recover catches (Open MPI did not take over SIGSEGV).
func goSignals(context.Context, backends.Transport) (err error) {
	defer func() {
		if recover() == nil {
			err = errors.New("a nil dereference did not panic")
		}
	}()
	var p *int
	return fmt.Errorf("read %d through a nil pointer", *p)
}

// timeout: a receive from a silent peer ends with ErrTimeout shortly
// after its deadline, and one whose context is cancelled with
// context.Canceled; both receives are cancelled in MPI, so the peer's
// next message reaches the next receive.
//
// "Shortly" is the deadline plus slack scaled from a round trip between
// the two ranks measured first (wallbound), not a time.
func timeout(ctx context.Context, tr backends.Transport) error {
	// roundTrip is one empty message there and back, begun by rank 0.
	var tripErr error
	roundTrip := func() {
		other := 1 - tr.Rank()
		first, second := tr.Send, tr.Recv
		if tr.Rank() == 1 {
			first, second = tr.Recv, tr.Send
		}
		tripErr = errors.Join(tripErr, first(other, nil).Wait(ctx), second(other, nil).Wait(ctx))
	}
	if tr.Rank() > 1 {
		return nil
	}
	base := wallbound.Baseline(roundTrip)
	if tripErr != nil {
		return fmt.Errorf("round trip: %w", tripErr)
	}
	switch tr.Rank() {
	case 0:
		const deadline = 50 * time.Millisecond
		dctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		begin := time.Now()
		if err := tr.Recv(1, make([]byte, 8)).Wait(dctx); !errors.Is(err, backends.ErrTimeout) {
			return fmt.Errorf("receive from a silent peer: got %v, want ErrTimeout", err)
		}
		if took, bound := time.Since(begin), wallbound.Bound(deadline, base); took > bound {
			return fmt.Errorf("the %v deadline ended the wait after %v (a round trip takes %v)", deadline, took, base)
		}
		cctx, cancel2 := context.WithCancel(ctx)
		cancel2()
		if err := tr.Recv(1, make([]byte, 8)).Wait(cctx); !errors.Is(err, context.Canceled) {
			return fmt.Errorf("receive with a cancelled context: got %v, want context.Canceled", err)
		}
		got := make([]byte, 8)
		s := tr.Send(1, nil)
		if err := errors.Join(tr.Recv(1, got).Wait(ctx), s.Wait(ctx)); err != nil {
			return err
		}
		if !bytes.Equal(got, backendtest.Payload(1, 9, 8)) {
			return errors.New("a cancelled receive took the peer's message")
		}
	case 1:
		// Rank 0's receives must have timed out before this arrives.
		if err := tr.Recv(0, nil).Wait(ctx); err != nil {
			return err
		}
		return tr.Send(0, backendtest.Payload(1, 9, 8)).Wait(ctx)
	}
	return nil
}

// closed: after Close, operations fail with ErrClosed.
func closed(ctx context.Context, tr backends.Transport) error {
	if err := tr.Close(); err != nil {
		return err
	}
	peer := (tr.Rank() + 1) % tr.Size()
	if err := tr.Send(peer, nil).Wait(ctx); !errors.Is(err, backends.ErrClosed) {
		return fmt.Errorf("send after Close: got %v, want ErrClosed", err)
	}
	return nil
}
