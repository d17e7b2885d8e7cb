package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/syslimits"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/boundedfile"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/scenario"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// scenarioCommand is `hccl-test scenario`.
var scenarioCommand = command{
	name: "scenario", args: "[flags] FILE", summary: "run a training step, name its critical domain",
	run: runScenario,
}

// scenarioHelp is the text of `hccl-test scenario --help` before the flags.
const scenarioHelp = `Runs one training or inference step described in FILE (JSON: an ordered list
of compute phases and collectives, each in a communication domain such as tp
or dp) for --iters iterations, and prints the step time and, per domain, its
communication time, the part of it the step was blocked on (exposed) and that
part's share of the step. Then it runs the step again once per domain with
that domain's links slowed by --slowdown through the fault injector, and names
the domain whose slowdown moved the step time most: the critical domain.
Every collective's result is checked. docs/scenarios.md describes the file.
With --backend sim the step runs in virtual time on simulated links
(--topology, --link-bw and the --sim flags, as in a sweep): compute phases
hold each rank's virtual clock, and slowed links hold each message on its
sender's port.`

// scenarioExit is the text of `hccl-test scenario --help` after the flags.
const scenarioExit = `Exit status: 0 done, 1 the run failed, 2 bad file or flags, 3 wrong results.`

// scenarioRun is what the scenario subcommand parsed: the scenario and how
// to run it.
type scenarioRun struct {
	sc     *scenario.Scenario
	opts   scenario.Options
	memory int64 // the estimate the run's memory guard compares with
	writes bool  // this process hosts rank 0 and writes the report
}

// runScenario is `hccl-test scenario [flags] FILE`.
func runScenario(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	r, err := parseScenario(args, stdout)
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s scenario: %s\n", programName, oneLine(err))
		return exitUsage
	}
	// Every stop cause (a signal, an output that fails, the memory guard)
	// cancels ctx and is told by set.finish in one line.
	ctx := set.watchSignals(programName + " scenario")
	r.opts.Log = stderr // the backend's notes and the output of the ranks it starts
	gctx, stopGuard := guardMemory(ctx, r.memory, set)
	rep, err := scenario.Run(gctx, r.sc, r.opts, stdout)
	stopGuard()
	switch {
	case err != nil && memoryStopped(gctx, set):
		return exitStopped
	case set.stopped() != nil && !r.writes:
		set.quietStop()
		return exitStopped
	case set.stopped() != nil:
		return exitStopped
	case errors.Is(err, runctl.ErrPlanMismatch), errors.Is(err, backends.ErrDisagree):
		fmt.Fprintf(stderr, "%s scenario: %s\n", programName, oneLine(err))
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "%s scenario: %s\n", programName, oneLine(err))
		return exitFailed
	case rep != nil && rep.Wrong > 0 && rep.Injected > 0:
		fmt.Fprintf(stderr, "%s scenario: %d wrong elements: the collective results are not correct (%d of them messages corrupted by --inject where the check could not see them, one each)\n",
			programName, rep.Wrong, rep.Injected)
		return exitWrong
	case rep != nil && rep.Wrong > 0:
		fmt.Fprintf(stderr, "%s scenario: %d wrong elements: the collective results are not correct\n", programName, rep.Wrong)
		return exitWrong
	}
	return exitOK
}

// scenarioWorldHelp is the scenario command's help of the flags it shares
// with the sweep (worldflags.go).
var scenarioWorldHelp = worldFlagHelp{
	timeout: "longest one collective may take before the run fails: 90s, 2m, or seconds; HCCL_EXEC_TIMEOUT, in seconds, replaces the default",
	connect: "longest setting up may take (tcp); HCCL_CONNECT_TIMEOUT, in seconds, replaces the default",
	master:  "rank 0's rendezvous address host:port (tcp under a launcher)",
	bind:    "address or network interface ranks listen on (tcp)",
	inject:  "faults to inject in every run, the baseline included (docs/faults.md), ",
}

// parseScenario reads the subcommand's flags and the scenario file, and
// checks both before anything runs.
func parseScenario(args []string, helpOut io.Writer) (scenarioRun, error) {
	fs := pflag.NewFlagSet("scenario", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	fs.SortFlags = false
	o := scenario.Options{World: world.World{Backend: "shm", Timeout: 2 * time.Minute, LaunchedRank: -1}}
	env, err := readEnv(os.LookupEnv, os.Environ(), envScenario)
	if err != nil {
		return scenarioRun{}, err
	}
	fs.StringVar(&o.Backend, "backend", o.Backend, "transport: "+strings.Join(backends.Names(), " ")+"; under mpirun, mpiexec, srun or torchrun, without --backend, "+world.LaunchedBackend()+": the launched processes are one world")
	fs.VarP(newCount(&o.Ranks, 0), "ranks", "p", "number of ranks, in place of the file's")
	iters := new(int)
	fs.VarP(newCount(iters, 0), "iters", "n", "timed iterations of the step per run, in place of the file's")
	slowdown := fs.String("slowdown", "", "how much slower a domain's links are made in its run, in place of the file's slowdown (default 50%)")
	addFaultFlags(fs, &o.Faults, scenarioWorldHelp)
	addLaunchFlags(fs, &o.World, env, scenarioWorldHelp)
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object with the same figures instead of the table")
	topology := fs.String("topology", "", "--backend sim: how ranks sit on servers, servers=S,per-server=P (ranks numbered server by server)")
	link := fs.String("link-bw", "", "--backend sim: bandwidth of the simulated links, a value or a preset; with --topology, intra=X,inter=Y for the links inside and between servers")
	own, ownSections := defineOwnFlags(backends.With(func(backends.Caps) bool { return true })) // ownflags.go
	for _, s := range ownSections {
		fs.AddFlagSet(s.FlagSet)
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return scenarioRun{}, fmt.Errorf("%w (see %s scenario --help)", err, programName)
	}
	if *help {
		writeCommandHelp(helpOut, "scenario", scenarioHelp, fs, scenarioExit)
		return scenarioRun{}, errHelpShown
	}
	// Under mpirun, mpiexec or srun the launched processes are one world.
	if err := o.ChooseLaunched(fs.Changed("backend"), os.Getenv); err != nil {
		return scenarioRun{}, err
	}
	if err := refuseForeignFlags(fs, o.World); err != nil {
		return scenarioRun{}, err
	}
	if b, err := o.Resolve(); err == nil { // an unknown backend is refused below
		if err := own.refuse(b); err != nil {
			return scenarioRun{}, err
		}
	}
	if fs.NArg() != 1 {
		return scenarioRun{}, fmt.Errorf("want one scenario FILE, got %d arguments (see %s scenario --help)", fs.NArg(), programName)
	}
	// -p and --iters replace the file's values, 0 (not given) keeps them.
	switch {
	case fs.Changed("ranks") && o.Ranks < 1:
		return scenarioRun{}, fmt.Errorf("--ranks %d: need at least 1 rank", o.Ranks)
	case fs.Changed("iters") && *iters < 1:
		return scenarioRun{}, fmt.Errorf("--iters %d: need at least 1 timed iteration", *iters)
	case fs.Changed("slowdown") && *slowdown == "":
		return scenarioRun{}, errors.New("--slowdown: empty (want a percentage such as 50%)")
	}
	// The world's size is the file's, known below; the rest of the world and
	// the faults are checked as a sweep's.
	if err := fielderr.FirstError(o.World.ValidateTimeouts, o.World.ValidateMaster, o.Faults.Validate, func() error { return parseFaults(&o.Faults) }); err != nil {
		return scenarioRun{}, err
	}
	// A rank started by a launcher (or by the tcp backend itself) takes the
	// world's size from it.
	if err := o.ApplyLauncher(fs.Changed("ranks")); err != nil {
		return scenarioRun{}, err
	}
	if err := o.CheckBackend(o.Ranks); err != nil {
		return scenarioRun{}, err
	}
	ov := scenario.Overrides{Iterations: *iters, Slowdown: *slowdown}
	switch {
	case o.LaunchedRank >= 0:
		ov.Ranks, ov.RanksFrom = o.Ranks, fmt.Sprintf("the launcher's %d ranks", o.Ranks)
	case fs.Changed("ranks"):
		ov.Ranks, ov.RanksFrom = o.Ranks, fmt.Sprintf("-p %d", o.Ranks)
	}
	file := fs.Arg(0)
	data, err := boundedfile.ReadFile(file, scenario.MaxFileBytes)
	if err != nil {
		return scenarioRun{}, fmt.Errorf("reading the scenario: %w", err)
	}
	sc, err := scenario.Parse(data, ov)
	if err != nil {
		return scenarioRun{}, fmt.Errorf("%s: %w", file, err)
	}
	if sc.Name == "" {
		sc.Name = file
	}
	o.Ranks = sc.Ranks
	if err := scenarioLinks(&o, own, *topology, *link); err != nil {
		return scenarioRun{}, err
	}
	if err := o.Inject.Validate(sc.Ranks, true); err != nil {
		return scenarioRun{}, err
	}
	hosted := int64(sc.Ranks)
	if o.LaunchedRank >= 0 {
		hosted = 1
	}
	b, _ := o.Resolve() // an unknown backend was refused by ApplyLauncher
	mem := sc.Memory(b, int(hosted), o.NoPayload)
	if l := syslimits.Read().Memory; l.Set && mem.Total() > l.Room {
		return scenarioRun{}, fmt.Errorf("%s: the scenario needs about %s of memory for %d ranks (%s the most), more than the %s %s",
			file, units.HumanSize(mem.Total()), hosted, mem.Largest().Name, units.HumanSize(max(l.Room, 0)), l.Name)
	}
	o.Args = append([]string{"scenario"}, args...)
	return scenarioRun{sc: sc, opts: o, writes: o.WritesOutput(), memory: mem.Total()}, nil
}

// scenarioLinks reads a scenario's simulated links on --backend sim from
// --topology and --link-bw into o.Links, and the backend's own options
// from its flags (sim's --sim-* flags) into o.Own, checked as a sweep's
// are (with o's world and faults), and whether it runs without payload
// into o.NoPayload; on other backends it refuses --topology and
// --link-bw.
func scenarioLinks(o *scenario.Options, own ownFlags, topology, link string) error {
	if !o.Caps().Simulated {
		switch {
		case topology != "":
			return fmt.Errorf("--topology: only --backend sim takes it in a scenario, to place the simulated ranks (elsewhere the file's groups are the domains)")
		case link != "":
			return fmt.Errorf("--link-bw: only --backend sim takes it in a scenario, for the simulated links")
		}
	}
	var topo world.Topology
	var err error
	if topology != "" {
		if topo, err = world.ParseTopology(topology, o.Ranks); err != nil {
			return err
		}
	}
	l := bench.Links{LinkSource: bench.LinkAuto}
	if link != "" {
		if err := parseLinks(&l, link); err != nil {
			return fmt.Errorf("--link-bw: %w", err)
		}
	}
	if b, err := o.Resolve(); err == nil {
		if err := own.read(b, &o.World); err != nil {
			return err
		}
		applyOwn(b, o.Own, &l)
	}
	o.Links, err = l.CheckWorld(o.World, topo, o.Faults)
	o.NoPayload = l.NoPayload
	return err
}
