package world

import (
	"os"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/launcher"
	"github.com/hccl-test/hccl-test/fielderr"
)

// LaunchedBackend returns the backend that the processes a launcher
// started run when no backend is named, the registered one whose
// capabilities say so (backends.Caps.LaunchDefault: proc, each process one
// rank, the ranks of a host sharing memory and the hosts joined by TCP), so
// that they are one world, as the ranks of hccl_test and nccl-tests under
// mpirun are; "" when none is registered.
func LaunchedBackend() string {
	if names := backends.NamesWith(func(c backends.Caps) bool { return c.LaunchDefault }); len(names) > 0 {
		return names[0]
	}
	return ""
}

// launchedBy returns the launcher environment of this process (getenv's
// variables) when a launcher other than hccl-test's own -p started it as
// one rank of two or more; a world of one process is no world of several,
// and runs as if no launcher had started it.
func launchedBy(getenv func(string) string) (launcher.Env, bool, error) {
	env, err := launcher.Read(getenv)
	if err != nil || env.Family == "" || env.Family == launcher.HCCLTest || env.Size < 2 {
		return env, false, err
	}
	return env, true, nil
}

// ChooseLaunched picks the backend of the processes a launcher started,
// so that they are one world. When a launcher started this process as one
// rank of several and w's backend cannot join a launched world (shm's and
// sim's ranks all live in one process): with no backend named
// (backendGiven false), w runs LaunchedBackend instead; a backend the user
// named is refused, before anything else about it is. A wrong launcher
// variable is a *launcher.Error.
func (w *World) ChooseLaunched(backendGiven bool, getenv func(string) string) error {
	_, launched, err := launchedBy(getenv)
	if err != nil || !launched {
		return err
	}
	b, err := w.Resolve()
	if err != nil {
		return nil // the plan's validation names the backends
	}
	if _, ok := b.(backends.Launched); ok {
		return nil
	}
	if backendGiven {
		return refuseLaunched(w.Backend, getenv)
	}
	w.Backend = LaunchedBackend()
	return nil
}

// ApplyLauncher takes the world size from the launcher that started this
// process, if the backend supports launchers and one did: its processes
// times PerProcess. ranksGiven says whether the user gave Ranks (-p, times
// PerProcess), which must agree with the launcher: under hccl-test's own
// -p, the processes of the world; under any other launcher, the processes
// on this host, as hccl_test's -p is the ranks (devices) per node.
func (w *World) ApplyLauncher(ranksGiven bool) error {
	b, err := w.Resolve()
	if err != nil {
		return fielderr.FieldErrorf("Backend", ": %w", err)
	}
	l, ok := b.(backends.Launched)
	if !ok {
		return refuseLaunched(w.Backend, os.Getenv)
	}
	lw, launched, err := l.LaunchedWorld(w.Config(backends.WorldLinks{}, false))
	if err != nil || !launched {
		return err
	}
	per := max(1, w.PerProcess)
	if ranksGiven {
		if err := checkPerNode(w.Ranks/per, lw, os.Getenv); err != nil {
			return err
		}
	}
	w.Ranks, w.HostedRanks, w.LaunchedRank = lw.Size*per, per, lw.Rank*per
	return nil
}

// checkPerNode checks -p, given as procs, against the launched world lw:
// hccl-test's own ranks (getenv's variables say which) are all of -p's
// processes; under another launcher -p is the processes on this host,
// which the launcher may say (lw.Local) and cannot outnumber its world.
func checkPerNode(procs int, lw backends.Launch, getenv func(string) string) error {
	env, err := launcher.Read(getenv)
	if err != nil {
		return err
	}
	const meaning = "under a launcher -p is the ranks per node, as hccl_test's (the launcher's process count makes the world)"
	switch {
	case env.Family == launcher.HCCLTest || env.Family == "":
		if procs != lw.Size {
			return fielderr.FieldErrorf("Ranks", " %d: this process was started by %s", procs, lw.Source)
		}
	case lw.Local > 0 && procs != lw.Local:
		return fielderr.FieldErrorf("Ranks", " %d: %s, and %s started %d processes on this host (%s): give -p %d, or leave -p out",
			procs, meaning, lw.Source, lw.Local, lw.LocalSource, lw.Local)
	case lw.Local == 0 && procs > lw.Size:
		return fielderr.FieldErrorf("Ranks", " %d: %s, and %s started %d processes in all: give at most -p %d, or leave -p out",
			procs, meaning, lw.Source, lw.Size, lw.Size)
	}
	return nil
}

// refuseLaunched refuses a backend whose ranks all run inside one process
// (it has no launcher support) for a process that a launcher (getenv's
// variables, package launcher) started as one rank of several: every
// launched process would run a world of its own, or, beside ranks of
// another backend, leave them waiting for it.
func refuseLaunched(backend string, getenv func(string) string) error {
	env, launched, err := launchedBy(getenv)
	if err != nil || !launched {
		return err
	}
	return fielderr.FieldErrorf("Backend", " %s: this process was started by %s as rank %d of %d processes, "+
		"but --backend %s runs every rank inside one process, so it cannot make the launched processes one world: "+
		"leave --backend out (they then run --backend %s) or give --backend tcp",
		backend, env.Source, env.Rank, env.Size, backend, LaunchedBackend())
}
