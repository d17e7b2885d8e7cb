// Package proc is the backend whose ranks are processes that share memory
// with the ranks of their host and use TCP between hosts, as NCCL, HCCL
// and MPI do. Ranks are started, meet, prove the job's secret, agree on
// failed calls and are torn down exactly as the tcp backend's are (it runs
// on the tcp backend's world); a message to a rank of the same host then
// goes through shared memory instead of a socket: the buffers the harness
// sends live in memfd segments that the receiver maps, and the receiver
// copies or reduces straight out of the sender's buffer, one pass over
// memory per hop, as the in-process shm backend does. Each rank's control
// segment holds its doorbell, a futex on which it sleeps when it must
// wait, and the rings of its sends to the other ranks of its host.
package proc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/tcp"
	"github.com/hccl-test/hccl-test/internal/hugemem"
	"github.com/hccl-test/hccl-test/internal/memguard"
)

// Name is the name the backend is registered under.
const Name = "proc"

func init() { backends.Register(Backend{}) }

// Backend runs one rank per process.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Capabilities implements backends.Backend: as tcp's (a rendezvous,
// processes it may start itself, hosts, failed calls run again), and
// receivers of the same host read senders' buffers.
func (Backend) Capabilities() backends.Caps {
	return backends.Caps{Launches: true, Rendezvous: true, Hosts: true, Recovers: true, SharedMemory: true, LaunchDefault: true}
}

// options checks that cfg's options are tcp's, which proc takes as they
// are.
func options(cfg backends.Config) error {
	switch cfg.Options.(type) {
	case nil, tcp.Options, *tcp.Options:
		return nil
	}
	return backends.OptionsError(Name, cfg.Options, "tcp.Options")
}

// CheckConfig implements backends.ConfigChecker, as tcp's.
func (Backend) CheckConfig(cfg backends.Config) error {
	if err := options(cfg); err != nil {
		return err
	}
	return tcp.Backend{}.CheckConfig(cfg)
}

// LaunchedWorld implements backends.Launched, as tcp's.
func (Backend) LaunchedWorld(cfg backends.Config) (backends.Launch, bool, error) {
	if err := options(cfg); err != nil {
		return backends.Launch{}, false, err
	}
	return tcp.Backend{}.LaunchedWorld(cfg)
}

// allocMu makes one Run at a time install the shared allocator.
var allocMu sync.Mutex

// Run implements backends.Backend: it runs the tcp backend's world (this
// process's rank, and the ranks it starts), with each rank's transport
// wrapped to reach the ranks of its host through shared memory. While it
// runs, hugemem's allocations (the harness's buffers, the algorithms'
// scratch space) are shared memory, which a receiver reads without the
// sender copying it first, and the resident-memory guard counts this
// process's own shared memory, not the other ranks' it maps.
func (Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := options(cfg); err != nil {
		return err
	}
	allocMu.Lock()
	defer allocMu.Unlock()
	defer hugemem.SetAllocator(allocShared)()
	defer memguard.SetOwnShared(sharedBytes.Load)()
	return tcp.Named(Name).Run(ctx, cfg, func(ctx context.Context, t backends.Transport) error {
		e, err := newEndpoint(ctx, t)
		if err != nil {
			return err
		}
		err = body(ctx, e)
		e.closeWith(backends.StopCause(ctx, err))
		return err
	})
}

// NewLocalWorld sets up n ranks inside this process over tcp's local
// world (tcp.NewLocalWorld), every one on this host, so that their
// messages go through shared memory exactly as between processes. It is
// meant for tests. Close every transport when done.
func NewLocalWorld(ctx context.Context, n int, cfg backends.Config) ([]backends.Transport, error) {
	ts, err := tcp.NewLocalWorld(ctx, n, cfg)
	if err != nil {
		return nil, err
	}
	out := make([]backends.Transport, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, t := range ts {
		wg.Go(func() {
			e, err := newEndpoint(ctx, t)
			out[r], errs[r] = e, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for r, t := range out {
			if errs[r] == nil {
				t.Close()
			} else {
				ts[r].Close()
			}
		}
		return nil, fmt.Errorf("local proc world of %d: %w", n, err)
	}
	return out, nil
}

// Options makes proc's options, which are tcp's: its ranks meet on tcp's
// world (backends.OptionsMaker).
func (Backend) Options(s backends.Settings) any { return tcp.Backend{}.Options(s) }
