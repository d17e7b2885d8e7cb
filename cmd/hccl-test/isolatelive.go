package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/syslimits"
	"github.com/hccl-test/hccl-test/isolate"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// isolateWorldHelp is the live search's help of the flags it shares with
// the sweep (worldflags.go).
var isolateWorldHelp = worldFlagHelp{
	timeout: "live: the limit of one measurement (a pair's sendrecv, a group's allreduce): measurement k must end by k+1 limits after the search began; HCCL_EXEC_TIMEOUT, in seconds, replaces the default",
	connect: "live: longest setting up may take (tcp); HCCL_CONNECT_TIMEOUT, in seconds, replaces the default",
	master:  "live: rank 0's rendezvous address host:port (tcp under a launcher)",
	bind:    "live: address or network interface ranks listen on (tcp)",
}

// liveFlags are the flags only a live search takes.
type liveFlags struct {
	o    isolate.LiveOptions
	env  environment
	size *string
}

// liveFlagNames are the flags given() looks for, in the order it names them.
var liveFlagNames = []string{"backend", "ranks", "size", "iters", "warmup-iters", "per-host", "timeout", "connect-timeout", "master", "bind"}

// addLiveFlags defines the live search's flags on fs.
func addLiveFlags(fs *pflag.FlagSet) (*liveFlags, error) {
	env, err := readEnv(os.LookupEnv, os.Environ(), envScenario)
	if err != nil {
		return nil, err
	}
	l := &liveFlags{o: isolate.DefaultLiveOptions(), env: env}
	o := &l.o
	fs.StringVar(&o.Backend, "backend", o.Backend, "live: transport, one that runs across hosts: "+strings.Join(backends.Names(), " ")+"; under mpirun, mpiexec, srun or torchrun, without --backend, "+world.LaunchedBackend())
	fs.VarP(newCount(&o.Ranks, 0), "ranks", "p", "live: number of ranks (under a launcher, ranks per host, as a sweep's -p)")
	l.size = fs.String("size", "8M", "live: bytes of every measurement (each rank's sendrecv and allreduce buffer), a multiple of 4")
	fs.VarP(newCount(&o.Iters, o.Iters), "iters", "n", "live: timed iterations of each measurement")
	fs.VarP(newCount(&o.Warmup, o.Warmup), "warmup-iters", "w", "live: untimed iterations before them")
	fs.Var(newCount(&o.PerHost, 0), "per-host", "live: count ranks as hosts, this many to a host in rank order (host0, host1, ...), in place of the hosts the ranks sit on")
	addLaunchFlags(fs, &o.World, env, isolateWorldHelp)
	for _, f := range []struct{ name, arg string }{{"size", "SIZE"}, {"iters", "N"}, {"warmup-iters", "N"}, {"per-host", "N"}, {"ranks", "N"}} {
		arg(fs, f.name, f.arg)
	}
	return l, nil
}

// given names the first live flag set on fs, "" if none.
func (l *liveFlags) given(fs *pflag.FlagSet) string {
	for _, name := range liveFlagNames {
		if fs.Changed(name) {
			return name
		}
	}
	return ""
}

// runIsolateLive is `hccl-test isolate` without DIR: the live search.
func runIsolateLive(fs *pflag.FlagSet, args []string, l *liveFlags, c isolate.Config, csvPath, image string, set *outputSet) int {
	stderr := io.Writer(set.stderr)
	o, err := parseLive(fs, args, l, c)
	if err != nil {
		return usageError(stderr, "isolate", err)
	}
	var csvOut io.Writer
	if o.WritesOutput() {
		if csvOut, err = isolateOutputs(csvPath, image, set); err != nil {
			return usageError(stderr, "isolate", err)
		}
	}
	o.Log = stderr
	ctx := set.watchSignals(programName + " isolate")
	// A rank that writes to a peer whose process died gets SIGPIPE, which
	// watchSignals takes for a stop once nothing else fails within half a
	// second: right for a sweep, which then fails, but the search goes on
	// past a failed measurement, so the rank stopped, its host's pairs
	// failed, and one killed rank named its peers' hosts too (exit 141
	// without a word). Ignored, the write fails with EPIPE: the
	// measurement fails and names the dead peer, and an output whose
	// reader left still stops the run through its own EPIPE.
	signal.Ignore(syscall.SIGPIPE)
	rep, err := isolate.RunLive(ctx, o)
	named := func() bool { h, p, g := rep.Named(); return len(h)+len(p)+len(g) > 0 }
	switch {
	case set.stopped() != nil && rep != nil:
		// What was measured before the stop is reported; the status is
		// the stop's.
		writeIsolate(rep.Report, rep.WriteText, named, csvOut, image, set)
		return exitStopped
	case set.stopped() != nil && !o.WritesOutput():
		set.quietStop()
		return exitStopped
	case set.stopped() != nil:
		return exitStopped
	case errors.Is(err, runctl.ErrPlanMismatch), errors.Is(err, backends.ErrDisagree):
		fmt.Fprintf(stderr, "%s isolate: %s\n", programName, oneLine(err))
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "%s isolate: %s\n", programName, oneLine(err))
		return exitFailed
	case rep == nil: // a rank process: rank 0's process writes the report
		return exitOK
	}
	return writeIsolate(rep.Report, rep.WriteText, named, csvOut, image, set)
}

// parseLive checks the live search's flags and world before any rank
// starts.
func parseLive(fs *pflag.FlagSet, args []string, l *liveFlags, c isolate.Config) (isolate.LiveOptions, error) {
	o := l.o
	o.Rule = c
	size, err := units.ParseSize(*l.size)
	if err != nil {
		return o, fmt.Errorf("--size: %w", err)
	}
	o.Bytes = size
	if err := o.ChooseLaunched(fs.Changed("backend"), os.Getenv); err != nil {
		return o, err
	}
	if err := refuseForeignFlags(fs, o.World); err != nil {
		return o, err
	}
	if err := fielderr.FirstError(o.ValidateTimeouts, o.ValidateMaster); err != nil {
		return o, err
	}
	if err := o.ApplyLauncher(fs.Changed("ranks")); err != nil {
		return o, err
	}
	switch {
	case o.Ranks == 0:
		return o, fmt.Errorf("no DIR and no world: give the directory of pairwise logs, or -p N (or a launcher) for a live search across hosts")
	case o.Ranks < 2:
		return o, fmt.Errorf("-p %d: a live search needs 2 ranks or more, on 2 hosts or more", o.Ranks)
	}
	if err := o.Validate(); err != nil {
		return o, fmt.Errorf("--%w", err)
	}
	switch caps := o.Caps(); {
	case caps.Simulated:
		return o, fmt.Errorf("--backend %s: a live search measures real links, and this backend's are simulated", o.Backend)
	case o.LaunchedRank < 0 && o.PerHost == 0 && !caps.InProcess:
		return o, fmt.Errorf("-p %d starts every rank on this machine, one host: give --per-host N to count N ranks a host, or start the ranks on several hosts with a launcher (mpirun, srun, torchrun's variables)", o.Ranks)
	case !caps.Hosts && o.PerHost == 0:
		return o, fmt.Errorf("--backend %s: its ranks share one process and report no hosts; give --per-host N to count N ranks a host, or run on tcp or proc", o.Backend)
	case o.Timeout >= limits.MaxDuration:
		return o, fmt.Errorf("--timeout 0 (none): a live search needs a limit for each measurement, past which it is recorded failed")
	}
	// Each rank holds a send and a receive buffer, and a fresh pair after
	// each failed measurement (the old ones are never reused): two pairs
	// are checked, the ranks of this machine counting.
	hosted := int64(o.Ranks)
	if o.LaunchedRank >= 0 {
		hosted = int64(max(1, o.PerProcess))
	}
	if l := syslimits.Read().Memory; l.Set && hosted*4*o.Bytes > l.Room {
		return o, fmt.Errorf("--size %s: %d ranks here need about %s of buffers, more than the %s %s",
			units.HumanSize(o.Bytes), hosted, units.HumanSize(hosted*4*o.Bytes), units.HumanSize(max(l.Room, 0)), l.Name)
	}
	o.Args = append([]string{"isolate"}, args...)
	b, err := o.Resolve()
	if err != nil {
		return o, err
	}
	if err := backends.CheckConfig(b, o.Config(backends.WorldLinks{}, false)); err != nil {
		return o, err
	}
	return o, nil
}
