package proc

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hccl-test/hccl-test/backends"
)

// TestWaitSkipsPollingOnSharedCPU: a rank whose peer (in another process)
// last waited on this rank's CPU sleeps at once, since its peer can answer
// only once it gives the CPU up; one whose peer waited elsewhere, or runs
// in this process, polls first.
func TestWaitSkipsPollingOnSharedCPU(t *testing.T) {
	tests := []struct {
		name        string
		peerCPU     func(cpu uint32) uint32 // what the peer published
		sameProcess bool
		skips       int // waits that slept without polling
	}{
		{"peer on this CPU", func(c uint32) uint32 { return c }, false, 1},
		{"peer on another CPU", func(c uint32) uint32 { return c + 1 }, false, 0},
		{"peer not yet known", func(uint32) uint32 { return 0 }, false, 0},
		{"peer in this process", func(c uint32) uint32 { return c }, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cpu := pinThread(t)
			eps := localWorld(t, 2)
			e, p := eps[0], eps[0].peers[1]
			e.spin, p.sameProcess = true, tc.sameProcess
			*p.ctl.u32(hdrCPU) = tc.peerCPU(cpu)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			defer cancel()
			if err := e.Recv(1, make([]byte, 8)).Wait(ctx); !errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("receive of a message never sent: %v, want its deadline", err)
			}
			if e.sameCPUWaits != tc.skips {
				t.Errorf("%d waits slept without polling, want %d", e.sameCPUWaits, tc.skips)
			}
			if got := *e.my.u32(hdrCPU); got != cpu {
				t.Errorf("published CPU %d, want %d", got, cpu)
			}
		})
	}
}

// pinThread locks the test's goroutine to its thread and that thread to
// one CPU until the test ends, and returns the CPU as thisCPU does.
func pinThread(t *testing.T) uint32 {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Skip("no CPU affinity here:", err)
	}
	var one unix.CPUSet
	for c := range 1024 {
		if was.IsSet(c) {
			one.Set(c)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Skip("cannot pin this thread:", err)
	}
	t.Cleanup(func() { _ = unix.SchedSetaffinity(0, &was) })
	cpu := thisCPU()
	if cpu == 0 {
		t.Skip("getcpu(2) does not answer here")
	}
	return cpu
}

// TestWaitGetsWhatAGonePeerLeft: a peer that posted a message and then
// closed its endpoint, between a waiting rank's last look at the message
// and its look at the peer, leaves the message to be had: the wait ends
// with it, not with the peer's end; with nothing there the peer's end is
// the answer. And a small message sent just before its sender closed is
// received whole.
func TestWaitGetsWhatAGonePeerLeft(t *testing.T) {
	eps := localWorld(t, 2)
	e, p := eps[0], eps[0].peers[1]
	atomic.StoreUint32(p.ctl.u32(hdrClosed), 1) // as the peer's Close does
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.sleepUntil(ctx, p, func() bool { return true }); err != nil {
		t.Errorf("wait for what a closed peer left: %v, want it", err)
	}
	if err := e.sleepUntil(ctx, p, func() bool { return false }); !errors.Is(err, backends.ErrPeerGone) {
		t.Errorf("wait for what a closed peer never sent: %v, want ErrPeerGone", err)
	}

	eps = localWorld(t, 2)
	sent := []byte("the last part of a gather")
	if err := eps[1].Send(0, sent).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	eps[1].Close()
	got := make([]byte, len(sent))
	if err := eps[0].Recv(1, got).Wait(ctx); err != nil || string(got) != string(sent) {
		t.Errorf("receive from a peer that sent and closed: %q, %v; want %q", got, err, sent)
	}
}
