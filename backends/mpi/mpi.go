//go:build mpi && cgo

package mpi

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/launcher"
)

// Name is the name the backend is registered under.
const Name = "mpi"

// getenv reads the environment; tests replace it.
var getenv = os.Getenv

func init() { backends.Register(Backend{}) }

// Backend runs this process as one rank of an MPI world.
type Backend struct{}

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Capabilities implements backends.Backend: its transports run MPI's own
// collectives (--algo native), for the data types and reductions that
// RunNative maps to MPI's (no fp8, which MPI has no type for, and no
// mulsum, which MPI has no operator for). Ranks are processes that mpirun
// starts, and a failed call cannot be run again.
func (Backend) Capabilities() backends.Caps {
	return backends.Caps{Native: true, NativeDTypes: sortedKeys(mpiTypes), NativeRedOps: sortedKeys(mpiOps)}
}

// sortedKeys returns m's keys in increasing order.
func sortedKeys[K ~uint8, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// LaunchedWorld implements backends.Launched from the environment that
// mpirun sets. Without it this process can only be a world of one rank
// (MPI's singleton init); asking for more is an error that says how to run.
func (Backend) LaunchedWorld(cfg backends.Config) (backends.Launch, bool, error) {
	// Settings that would fail Run are reported now, before anything runs.
	if _, err := spinFromEnv(); err != nil {
		return backends.Launch{}, false, err
	}
	if _, err := collFromEnv(); err != nil {
		return backends.Launch{}, false, err
	}
	env, err := launcher.Read(getenv)
	if err != nil {
		return backends.Launch{}, false, err
	}
	if env.Family == launcher.OpenMPI || env.Family == launcher.MPICH {
		return backends.Launch{Rank: env.Rank, Size: env.Size, Source: env.Source, Local: env.LocalSize, LocalSource: env.LocalSource}, true, nil
	}
	if cfg.Ranks > 1 {
		return backends.Launch{}, false, fmt.Errorf(
			"the mpi backend runs under mpirun, one process per rank: mpirun -np %d hccl-test --backend mpi ... "+
				"(without mpirun it runs a single rank, -p 1; asked for %d ranks)", cfg.Ranks, cfg.Ranks)
	}
	return backends.Launch{}, false, nil
}

// Run implements backends.Backend: it initialises MPI, calls body once with
// this process's rank, and finalises MPI. MPI can be initialised once per
// process, so Run can be called once. When body fails, Run returns its
// error without finalising MPI (its peers may be inside a collective that
// will never complete); mpirun then ends the job.
func (b Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Options != nil {
		return backends.OptionsError(Name, cfg.Options, "none")
	}
	l, launched, err := b.LaunchedWorld(cfg)
	if err != nil {
		return err
	}
	if launched && l.Size != cfg.Ranks {
		return fmt.Errorf("started by %s for %d ranks, but asked for %d", l.Source, l.Size, cfg.Ranks)
	}
	spin, err := spinFromEnv()
	if err != nil {
		return err
	}
	blocking, err := collFromEnv()
	if err != nil {
		return err
	}
	mt, err := startMPI()
	if err != nil {
		return err
	}
	w := mt.world
	if w.size != cfg.Ranks {
		// Every rank sees the same mismatch: finalising is safe.
		_ = mt.finalize(true)
		return fmt.Errorf("mpi rank %d: MPI_COMM_WORLD has %d ranks, but asked for %d", w.rank, w.size, cfg.Ranks)
	}
	if shareCPUs(w.local) {
		spin = 0 // every CPU cycle is some rank's work
	}
	t := &Transport{rank: w.rank, size: w.size, spin: spin, blocking: blocking}
	err = body(ctx, t)
	_ = t.Close()
	switch {
	case err != nil:
		_ = mt.finalize(false)
		return err
	case t.dirty:
		_ = mt.finalize(false)
		return fmt.Errorf("mpi rank %d: requests were still pending when the run ended; MPI not finalised", w.rank)
	}
	return mt.finalize(true)
}

// mainThread is the OS thread that initialised MPI, which must also
// finalise it. A goroutine locked to it waits for finalize; the rank's
// own goroutine stays free to move between threads (MPI_THREAD_SERIALIZED
// allows that), which keeps runtime.Gosched cheap while it polls.
type mainThread struct {
	world world
	done  chan bool  // true: finalise MPI; false: leave it
	ended chan error // MPI_Finalize's error
}

// startMPI initialises MPI on a thread of its own.
func startMPI() (*mainThread, error) {
	m := &mainThread{done: make(chan bool), ended: make(chan error, 1)}
	started := make(chan error)
	go func() {
		// Never unlocked: if MPI is left unfinalised, the thread ends
		// with this goroutine.
		runtime.LockOSThread()
		mu.Lock()
		w, err := initMPI()
		mu.Unlock()
		m.world = w
		started <- err
		if err != nil || !<-m.done {
			m.ended <- nil
			return
		}
		mu.Lock()
		m.ended <- finalizeMPI()
		mu.Unlock()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return m, nil
}

// finalize finalises MPI on the main thread, or with ok false lets the
// thread go without.
func (m *mainThread) finalize(ok bool) error {
	m.done <- ok
	return <-m.ended
}

// shareCPUs sets how many threads this process runs Go code on: the host's
// CPUs divided among the local ranks, at least one, unless GOMAXPROCS is
// set. It reports whether the host has more ranks than CPUs.
func shareCPUs(local int) (oversubscribed bool) {
	if local < 1 {
		return false
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/local))
	}
	return local > runtime.NumCPU()
}

// spinFromEnv reads EnvSpin.
func spinFromEnv() (time.Duration, error) { return ParseSpin(getenv(EnvSpin)) }

// collFromEnv reads EnvColl: whether native collectives are blocking calls.
func collFromEnv() (blocking bool, err error) { return ParseColl(getenv(EnvColl)) }
