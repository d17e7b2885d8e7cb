package bench

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/hugemem"
)

// holdBackend is shm whose rank 0 leaves one receive pending, as tcp's
// reader does with a receive whose wait gave up on its context: the
// receive into a buffer of holdState.size bytes never finishes, and the
// buffer stays the transport's until Run returns. Run records whether the
// harness freed that buffer before.
type holdBackend struct{}

// holdState is what holdBackend, collectBackend and recordAllocations
// share.
var holdState struct {
	sync.Mutex
	size   int              // the size of the allocation whose receive is held
	allocs map[uintptr]int  // live and freed allocations by base: their size
	freed  map[uintptr]bool // the allocations freed so far
	held   uintptr          // the base of the allocation held, 0 before
	posted chan struct{}    // closed once the receive is held
	early  bool             // held was freed before the transport ended
	// gen counts recordAllocations: a free of an earlier test's mapping
	// (its communicator collected now) is not this test's.
	gen int
}

// recordAllocations makes hugemem allocate from the heap and record every
// allocation and free in holdState, from empty, until the returned
// function restores the allocator.
func recordAllocations() (restore func()) {
	holdState.Lock()
	holdState.gen++
	gen := holdState.gen
	holdState.allocs, holdState.freed = map[uintptr]int{}, map[uintptr]bool{}
	holdState.Unlock()
	return hugemem.SetAllocator(func(n int) ([]byte, func(), error) {
		b := make([]byte, n)
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		holdState.Lock()
		holdState.allocs[base] = n
		holdState.Unlock()
		return b, func() {
			holdState.Lock()
			if holdState.gen == gen {
				holdState.freed[base] = true
			}
			holdState.Unlock()
		}, nil
	})
}

func init() { backends.Register(holdBackend{}) }

func (holdBackend) Name() string                { return "hold-recv" }
func (holdBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (holdBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	err := shm.Backend{}.Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		return body(ctx, holdTransport{t})
	})
	// The transport has ended: from here on the harness may free it.
	holdState.Lock()
	if holdState.held != 0 && holdState.freed[holdState.held] {
		holdState.early = true
	}
	holdState.Unlock()
	return err
}

// holdTransport holds rank 0's first receive into an allocation of
// holdState.size bytes.
type holdTransport struct{ backends.Transport }

func (h holdTransport) BeginCall(call backends.Call) {
	if tg, ok := h.Transport.(backends.CallTagger); ok {
		tg.BeginCall(call)
	}
}

func (h holdTransport) Recv(peer int, buf []byte) backends.Request {
	if h.hold(buf) {
		return heldRequest{}
	}
	return h.Transport.Recv(peer, buf)
}

func (h holdTransport) RecvReduce(peer int, dst, acc []byte, reduce dtype.ReduceFunc) backends.Request {
	if h.hold(dst) {
		return heldRequest{}
	}
	return h.Transport.RecvReduce(peer, dst, acc, reduce)
}

// hold reports whether the receive into buf is the one to hold, and
// records it.
func (h holdTransport) hold(buf []byte) bool {
	if h.Rank() != 0 || len(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	holdState.Lock()
	defer holdState.Unlock()
	if holdState.held != 0 {
		return false
	}
	for base, n := range holdState.allocs {
		if n == holdState.size && p >= base && p < base+uintptr(n) && !holdState.freed[base] {
			holdState.held = base
			close(holdState.posted)
			return true
		}
	}
	return false
}

// heldRequest never finishes; its wait gives up on the context.
type heldRequest struct{}

func (heldRequest) Wait(ctx context.Context) error {
	<-ctx.Done()
	return backends.ContextError(ctx)
}

// TestBuffersOutliveTransport: a buffer the link probe or the calibration
// allocated for itself is not freed while the transport may still fill a
// receive into it. The probe freed its buffers as it returned, with the
// receive still posted: over tcp, a SIGTERM during the probe made the
// reader fault on the unmapped buffer (a Go stack trace of 429 lines).
func TestBuffersOutliveTransport(t *testing.T) {
	step, _ := calSizes(2)
	for _, tc := range []struct {
		name string
		size int
		edit func(p *Plan)
	}{
		{"link probe", int(probeSize(2)), func(p *Plan) { p.Algo = "ring" }},
		{"calibration", int(step), func(p *Plan) { p.LinkGBps, p.LinkSource = 10, "given" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			holdState.Lock()
			holdState.size = tc.size
			holdState.held, holdState.early = 0, false
			holdState.posted = make(chan struct{})
			posted := holdState.posted
			holdState.Unlock()
			defer recordAllocations()()
			p := DefaultPlan()
			p.Backend, p.Ranks = "hold-recv", 2
			p.MinBytes, p.MaxBytes, p.Iters, p.Warmup = 1024, 1024, 1, 0
			tc.edit(&p)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-posted
				cancel()
			}()
			var c capture
			_, err := Run(ctx, p, &c)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v, want the cancellation", err)
			}
			holdState.Lock()
			defer holdState.Unlock()
			if holdState.held == 0 {
				t.Fatalf("no receive into a buffer of %d bytes was posted", tc.size)
			}
			if holdState.early {
				t.Errorf("the buffer of a receive still pending was freed before the transport ended")
			}
			if !holdState.freed[holdState.held] {
				t.Errorf("the buffer of the held receive was never freed")
			}
		})
	}
}

// collectBackend is shm that, once every rank has returned and before its
// Run returns (while a real transport would still be closing), collects
// garbage until a cleanup frees something, as a busy process may; it
// records how many of holdState's allocations were freed in that window.
type collectBackend struct{}

func init() { backends.Register(collectBackend{}) }

func (collectBackend) Name() string                { return "collect-after-ranks" }
func (collectBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (collectBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	err := shm.Backend{}.Run(ctx, cfg, body)
	// Cleanups run on a goroutine of their own after a collection: give
	// them a bounded while to.
	for range 20 {
		runtime.GC()
		holdState.Lock()
		n := len(holdState.freed)
		holdState.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	holdState.Lock()
	holdState.early = len(holdState.freed) > 0
	holdState.Unlock()
	return err
}

// TestScratchOutlivesTransport: a run that needs no buffer of the probe's
// or the calibration's frees nothing it mapped (its buffers, its
// communicators' scratch, unmapped when they are collected) before the
// backend's Run has returned.
func TestScratchOutlivesTransport(t *testing.T) {
	holdState.Lock()
	holdState.held, holdState.early = 0, false
	holdState.Unlock()
	defer recordAllocations()()
	p := DefaultPlan()
	p.Backend, p.Ranks, p.Algo = "collect-after-ranks", 4, "ring"
	p.MinBytes, p.MaxBytes, p.Iters, p.Warmup = 1<<20, 1<<20, 1, 0
	p.LinkGBps, p.LinkSource = 10, "given"
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	holdState.Lock()
	defer holdState.Unlock()
	if len(holdState.allocs) == 0 {
		t.Fatal("nothing was mapped: the test shows nothing")
	}
	if holdState.early {
		t.Errorf("%d of %d mappings were freed before the transport ended", len(holdState.freed), len(holdState.allocs))
	}
}
