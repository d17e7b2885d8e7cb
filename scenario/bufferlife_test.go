package scenario

import (
	"context"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/shm"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/world"
)

// collectingBackend is shm that, once every rank has returned and before
// its Run returns (while a real transport would still be closing), collects
// garbage until a cleanup frees something, as a busy process may; it
// records whether memory outside the heap was freed in that window.
type collectingBackend struct{}

// collecting is what collectingBackend and the allocator of
// TestScratchOutlivesTransport share.
var collecting struct {
	sync.Mutex
	allocs, freed int
	early         bool // something was freed before the transport ended
}

func init() { backends.Register(collectingBackend{}) }

func (collectingBackend) Name() string                { return "collect-after-ranks" }
func (collectingBackend) Capabilities() backends.Caps { return shm.Backend{}.Capabilities() }
func (collectingBackend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	err := shm.Backend{}.Run(ctx, cfg, body)
	// Cleanups run on a goroutine of their own after a collection: give
	// them a bounded while to.
	for range 20 {
		runtime.GC()
		collecting.Lock()
		freed := collecting.freed
		collecting.Unlock()
		if freed > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	collecting.Lock()
	collecting.early = collecting.freed > 0
	collecting.Unlock()
	return err
}

// TestScratchOutlivesTransport: the communicators' scratch space, mapped
// outside the Go heap and unmapped when a communicator is collected, is
// not freed before the backend's Run has returned, since a transport may
// still fill a receive into it until then.
func TestScratchOutlivesTransport(t *testing.T) {
	collecting.Lock()
	collecting.allocs, collecting.freed, collecting.early = 0, 0, false
	collecting.Unlock()
	defer hugemem.SetAllocator(func(n int) ([]byte, func(), error) {
		collecting.Lock()
		collecting.allocs++
		collecting.Unlock()
		return make([]byte, n), func() {
			collecting.Lock()
			collecting.freed++
			collecting.Unlock()
		}, nil
	})()
	sc, err := Parse([]byte(`{"name": "scratch", "ranks": 4, "iterations": 1, "warmup": 0, "steps": [
		{"op": "allreduce", "group": "world", "size": "1M", "dtype": "fp32"}]}`), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), sc, Options{World: world.World{Backend: "collect-after-ranks", Timeout: 30 * time.Second}}, io.Discard); err != nil {
		t.Fatal(err)
	}
	collecting.Lock()
	defer collecting.Unlock()
	if collecting.allocs == 0 {
		t.Fatal("no scratch space was mapped: the test shows nothing")
	}
	if collecting.early {
		t.Errorf("%d of %d mappings were freed before the transport ended", collecting.freed, collecting.allocs)
	}
}
