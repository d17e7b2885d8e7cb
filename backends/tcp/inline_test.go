package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestInlineReads checks that a receive of a small message whose frame is
// already in the socket is filled by the goroutine that waits for it
// (readInline), copied or reduced right, that a large one is left to the
// reader, as is every message when ranks outnumber CPUs, in the order
// sent on one link; and that a frame of another call is left to the
// reader, which reports the mismatch.
func TestInlineReads(t *testing.T) {
	if spinBudget <= 0 {
		t.Skip("polling is off (HCCL_TEST_SPIN=0): the reader holds the socket")
	}
	over := oversubscribed
	t.Cleanup(func() { oversubscribed = over })
	// One P: the reader, woken by the post, runs only once the test's
	// goroutine waits, and finds the read side taken.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps := localWorld(t, 2, backends.Config{})
	// Rank 0 dials rank 1 once it has something for it.
	hello := eps[1].Recv(0, make([]byte, 1))
	if err := errors.Join(eps[0].Send(1, []byte{1}).Wait(ctx), hello.Wait(ctx)); err != nil {
		t.Fatal(err)
	}
	me := eps[0]
	l, err := me.linkTo(1)
	if err != nil {
		t.Fatal(err)
	}
	sum := dtype.Reducer(dtype.Int32, dtype.Sum)
	tests := []struct {
		size           int
		reduce         bool
		oversubscribed bool
		inline         bool
	}{
		{8, false, false, true},
		{1 << 10, true, false, true},
		{smallFrame, false, false, true},
		{smallFrame, true, false, true},
		{smallFrame + 4, false, false, false},
		{64 << 10, true, false, false},
		{1 << 10, true, true, false},
		{8, false, false, true},
	}
	for i, tc := range tests {
		oversubscribed = tc.oversubscribed
		name := fmt.Sprintf("%d bytes, reduce %v, oversubscribed %v", tc.size, tc.reduce, tc.oversubscribed)
		src := ints(tc.size, int32(i+1))
		if err := eps[1].Send(0, src).Wait(ctx); err != nil {
			t.Fatalf("%s: send: %v", name, err)
		}
		waitUnread(t, l, HeaderSize+tc.size)
		before := me.inlineFills.Load()
		dst := make([]byte, tc.size)
		want := src
		var req backends.Request
		if tc.reduce {
			acc := ints(tc.size, 100)
			want = ints(tc.size, int32(i+1)+100)
			req = me.RecvReduce(1, dst, acc, sum)
		} else {
			req = me.Recv(1, dst)
		}
		if err := req.Wait(ctx); err != nil {
			t.Fatalf("%s: receive: %v", name, err)
		}
		if !bytes.Equal(dst, want) {
			t.Errorf("%s: received the wrong bytes", name)
		}
		if got := me.inlineFills.Load() - before; got != map[bool]int64{true: 1, false: 0}[tc.inline] {
			t.Errorf("%s: %d receives filled by their waiter, want inline=%v", name, got, tc.inline)
		}
	}
	oversubscribed = false

	// A frame of another call, already in the socket: the waiter leaves
	// it to the reader, which reports the mismatch (and fails the link).
	eps[1].BeginCall(backends.Call{Seq: 17, Op: 2, DType: 11})
	me.BeginCall(backends.Call{Seq: 17, Op: 1, DType: 11})
	if err := eps[1].Send(0, make([]byte, 8)).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitUnread(t, l, HeaderSize+8)
	before := me.inlineFills.Load()
	if err := me.Recv(1, make([]byte, 8)).Wait(ctx); !errors.Is(err, backends.ErrMismatch) {
		t.Errorf("a frame of another call: %v, want a mismatch", err)
	}
	if n := me.inlineFills.Load() - before; n != 0 {
		t.Errorf("a frame of another call was taken by its waiter")
	}
}

// ints returns n/4 int32s, the i-th being i times k.
func ints(n int, k int32) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], uint32(int32(i/4)*k))
	}
	return b
}

// waitUnread waits until l's socket holds at least n bytes unread.
func waitUnread(t *testing.T, l *link, n int) {
	t.Helper()
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); unread(t, conn) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes never reached the socket (%d there)", n, unread(t, conn))
		}
		time.Sleep(time.Millisecond)
	}
}
