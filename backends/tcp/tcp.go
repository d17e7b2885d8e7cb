// Package tcp is the backend whose ranks are processes, on one machine or
// many, exchanging framed messages over TCP. hccl-test starts the ranks
// itself (-p N: rank 0 in this process, the others as child processes of
// the same program over loopback), or an existing launcher does (mpirun,
// srun, torchrun), one process per rank. Ranks meet at rank 0, prove that
// they share the job's secret, and connect pairwise as their algorithms
// need.
package tcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hccl-test/hccl-test/backends"
)

// Name is the name the backend is registered under.
const Name = "tcp"

// DefaultConnectTimeout limits setting up when the configuration gives no
// limit: backends.DefaultConnectTimeout, HCCL's default for
// HCCL_CONNECT_TIMEOUT.
const DefaultConnectTimeout = backends.DefaultConnectTimeout

// getenv reads the environment; tests replace it.
var getenv = os.Getenv

func init() {
	backends.Register(Backend{})
	backends.RegisterEnv(EnvSpin, func(v string) error { _, err := ParseSpin(v); return err })
}

// connectTimeout is o's connect timeout, or the default.
func connectTimeout(o Options) time.Duration {
	if o.ConnectTimeout <= 0 {
		return DefaultConnectTimeout
	}
	return o.ConnectTimeout
}

// Backend runs one rank per process.
type Backend struct {
	// name is the backend a rank says it runs (Hello.Agree): "" for tcp,
	// another for a backend built on this one (Named).
	name string
}

// Named returns the tcp backend as run by the backend called name (proc),
// whose ranks refuse, at the handshake, ranks that run another backend.
func Named(name string) Backend { return Backend{name: name} }

// Name implements backends.Backend.
func (Backend) Name() string { return Name }

// Capabilities implements backends.Backend: ranks meet at a rendezvous
// address, may be processes it starts itself, report their hosts, and can
// run failed calls again.
func (Backend) Capabilities() backends.Caps {
	return backends.Caps{Launches: true, Rendezvous: true, Hosts: true, Recovers: true}
}

// Run implements backends.Backend: it hosts this process's ranks (one, or
// Options.PerProcess). Without a launcher this process hosts rank 0 and
// starts the other rank processes as children, waits for them at the end,
// and ends them if the run fails.
func (b Backend) Run(ctx context.Context, cfg backends.Config, body backends.RankFunc) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	o, err := options(cfg)
	if err != nil {
		return err
	}
	r, launched, err := detectLaunch(getenv, o.Master, o.Bind)
	if err != nil {
		return err
	}
	per := max(1, o.PerProcess)
	if cfg.Ranks%per != 0 {
		return fmt.Errorf("%d ranks cannot be hosted %d to a process", cfg.Ranks, per)
	}
	if launched && r.Size*per != cfg.Ranks {
		return fmt.Errorf("started by %s for %d ranks (%d processes of %d), but asked for %d", r.Source, r.Size*per, r.Size, per, cfg.Ranks)
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	if r.Child {
		watchParent(log)
	}
	switch {
	case !launched || r.Child:
		shareCPUs(cfg.Ranks) // every rank on this host
	default:
		shareCPUs(r.Local * per)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var kids *children
	unwatch := func() {}
	var started func(string) error
	if !launched {
		procs := cfg.Ranks / per
		r = role{Rank: 0, Size: procs, Master: o.Master, Secret: newSecret(), Source: "hccl-test"}
		if r.Master == "" {
			r.Master = "127.0.0.1:0"
		}
		started = func(master string) error {
			var err error
			kids, err = spawn(procs, master, r.Secret, o.Args, log)
			if err == nil {
				kids.forwardSIGQUIT()
				unwatch = kids.watch(o.OpTimeout, cancel)
			}
			return err
		}
	}
	met := func() {} // ends the meeting of a launched job, once set up
	if r.meet != nil {
		if started, met, err = meet(ctx, &r, connectTimeout(o)); err != nil {
			return err
		}
	}
	r.Backend = b.name
	err = runHosted(ctx, r, per, cfg, started, met, body)
	unwatch()
	if r.Child {
		sayStopped(log, r.Rank, stopCause(ctx, err))
	}
	if kids == nil {
		return err
	}
	if err != nil {
		// A child that is stopped or was killed is the likely cause: it
		// leads, before what this rank saw of it (a cut line keeps its
		// head); the others that failed with it follow.
		culprits, others := kids.exited()
		switch {
		case culprits != nil && others != nil:
			err = fmt.Errorf("%v: %w (%v)", culprits, err, others)
		case culprits != nil:
			err = fmt.Errorf("%v: %w", culprits, err)
		case others != nil:
			err = fmt.Errorf("%w (%v)", err, others)
		}
		kids.kill()
		return err
	}
	// Every rank has finished its last collective with rank 0; children
	// only have to exit.
	if cerr := kids.wait(connectTimeout(o)); cerr != nil {
		return fmt.Errorf("rank processes: %w", cerr)
	}
	return nil
}
