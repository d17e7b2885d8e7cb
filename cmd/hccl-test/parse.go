package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/internal/syslimits"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// errHelpShown reports that --help was asked for and printed.
var errHelpShown = errors.New("help shown")

// options are flags that do not become part of the plan.
type options struct {
	version bool
	dryRun  bool
	// csv, json and bench name files for those formats; "-" is stdout,
	// in place of the table.
	csv, json, bench string
	// ncclJSON names the file of nccl-tests' JSON report (-J).
	ncclJSON string
	// cpuProfile names the file of a CPU profile of the run
	// (HCCL_TEST_CPUPROFILE, env.go), "" for none.
	cpuProfile string
}

// sweepWorldHelp is the sweep's help of the flags it shares with the
// scenario command (worldflags.go).
var sweepWorldHelp = worldFlagHelp{
	timeout: "longest one op may take before the run fails: 90s, 2m, or seconds; HCCL_EXEC_TIMEOUT, in seconds, replaces the default",
	connect: "longest setting up may take: rendezvous and each connection (tcp); HCCL_CONNECT_TIMEOUT, in seconds, replaces the default",
	master:  "rank 0's rendezvous address host:port, the same on every rank (tcp under mpirun or srun; torchrun's MASTER_ADDR and MASTER_PORT are read too)",
	bind:    "address or network interface that ranks listen on (tcp); loopback when not given",
	inject:  "faults to inject (docs/faults.md), ",
}

// parseFlags turns the command line into a plan. Semantic checks that need
// the whole plan are left to Plan.Validate.
func parseFlags(args []string, helpOut io.Writer) (bench.Plan, options, error) {
	p := bench.DefaultPlan()
	var o options
	env, err := readEnv(os.LookupEnv, os.Environ(), envSweep)
	if err != nil {
		return p, o, err
	}
	o.cpuProfile = env.cpuProfile
	p.MinBusBW = env.minBusBW
	p.RankSummary = env.alltoallv.PrintSummary
	f := newSweepFlags(&p, &o, env) // sweepflags.go
	fs := f.fs
	envRetry := env.retry
	ops, dtypes, redops, check, measure, threads, runf := f.ops, f.dtypes, f.redops, &f.check, f.measure, f.threads, f.runf
	placement, cache, topology, link, groups, fusion, overlap := f.placement, f.cache, f.topology, f.link, f.groups, f.fusion, f.overlap

	if err := fs.Parse(args); err != nil {
		return p, o, err
	}
	if err := calledAs.applyDefaults(fs); err != nil { // all_reduce_perf's defaults (programs.go)
		return p, o, err
	}
	if *f.help {
		writeSweepHelp(helpOut, f)
		return p, o, errHelpShown
	}
	if err := refuseGPUFlags(fs); err != nil {
		return p, o, err
	}
	if err := refuseDeviceFlags(fs); err != nil {
		return p, o, err
	}
	if err := hcclTestOp(fs, ops, redops); err != nil {
		return p, o, err
	}
	// Under mpirun, mpiexec or srun the launched processes are one world.
	if err := p.ChooseLaunched(fs.Changed("backend"), os.Getenv); err != nil {
		return p, o, err
	}
	if err := refuseForeignFlags(fs, p.World); err != nil {
		return p, o, err
	}
	b, errBackend := p.Resolve() // an unknown backend is refused by the plan's validation
	if errBackend == nil {
		if err := f.own.refuse(b); err != nil {
			return p, o, err
		}
	}
	if err := threads.apply(fs, &p); err != nil {
		return p, o, err
	}
	if err := p.Sweep.ValidateRuns(); err != nil {
		return p, o, err
	}
	outs := 0
	for _, f := range []string{o.csv, o.json, o.bench, o.ncclJSON} {
		if f == "-" {
			outs++
		}
	}
	if outs > 1 {
		if o.ncclJSON == "-" {
			return p, o, fmt.Errorf("-J -: only one output can write to stdout (-), and --csv, --json or --bench does")
		}
		return p, o, fmt.Errorf("--csv, --json, --bench: only one of them can write to stdout (-)")
	}
	if err := runf.apply(fs, &p); err != nil {
		return p, o, err
	}
	if fs.NArg() > 0 {
		return p, o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if p.Ops, err = splitList("op", *ops, coll.AllOps, parseOp); err != nil {
		return p, o, err
	}
	if p.DTypes, err = splitList("datatype", *dtypes, dtype.All, dtype.Parse); err != nil {
		return p, o, err
	}
	if p.RedOps, err = splitList("redop", *redops, dtype.AllOps, dtype.ParseOp); err != nil {
		return p, o, err
	}
	p.MinBytes, p.MaxBytes, p.StepFactor, p.StepBytes = int64(f.minB), int64(f.maxB), *f.factor, int64(f.stepB)
	for flag, set := range map[string]bench.StepsSet{"stepfactor": bench.FactorSet, "stepbytes": bench.BytesSet} {
		if fs.Changed(flag) {
			p.StepsSet |= set
		}
	}
	if err := p.Sweep.ValidateSteps(); err != nil {
		return p, o, err
	}
	p.Check, p.CheckIters = *check > 0, *check
	if err := p.Method.ValidateCheckIters(); err != nil {
		return p, o, err
	}
	if err := measure.apply(&p.Method); err != nil {
		return p, o, err
	}
	if p.Placements, err = bench.ParsePlacements(*placement); err != nil {
		return p, o, fmt.Errorf("--placement: %w", err)
	}
	if p.Cache, err = bench.ParseCache(*cache); err != nil {
		return p, o, fmt.Errorf("--cache %w", err)
	}
	if err := parseLinks(&p.Links, *link); err != nil {
		return p, o, err
	}
	if env.algoSet && !fs.Changed("algo") {
		if p.OpAlgos, err = coll.ParseHCCLAlgo(env.algo, p.Ops); err != nil {
			return p, o, err
		}
	}
	if err := parseFaults(&p.Faults); err != nil {
		return p, o, err
	}
	switch {
	case strings.EqualFold(*topology, "auto"):
		p.TopologyAuto = true
	case *topology != "":
		if p.Topology, err = world.ParseTopology(*topology, p.Ranks); err != nil {
			return p, o, err
		}
	}
	if env.split != nil && p.LayoutText == "" && *groups == "" {
		if p.LayoutText, *groups, err = env.split.groups(p.Ranks); err != nil {
			return p, o, err
		}
	}
	if err := parseDomains(&p, *groups, *fusion, *overlap); err != nil {
		return p, o, err
	}
	if err := parseTraffic(&p, fs.Changed("traffic"), *f.traffic, env.alltoallv); err != nil {
		return p, o, err
	}
	if errBackend == nil {
		if err := f.own.read(b, &p.World); err != nil {
			return p, o, err
		}
		applyOwn(b, p.Own, &p.Links)
	}
	if p.NoPayload {
		p.Check = false // nothing to check
	}
	p.RetryHold, p.RetryInterval = f.hold.duration(), f.interval.duration()
	switch {
	case fs.Changed("retry"):
		p.RetrySource = "--retry"
	case envRetry.enabled:
		p.Retry, p.RetrySource = envRetry.max, envRetry.source
	}
	p.Args = args
	if err := p.ApplyLauncher(fs.Changed("ranks")); err != nil {
		return p, o, err
	}
	p.Limits = syslimits.Read()
	if p.Limits.Memory.Set {
		p.MemLimit = max(p.Limits.Memory.Room, 1) // a cgroup already full refuses every run
	}
	return p, o, nil
}

func (d durationValue) duration() time.Duration { return time.Duration(d) }

// parseOp parses a collective, pointing users who type a reduction at
// --redop.
func parseOp(s string) (coll.Op, error) {
	op, err := coll.ParseOp(s)
	if err == nil {
		return op, nil
	}
	if r, rerr := dtype.ParseOp(s); rerr == nil {
		return 0, fmt.Errorf("%q is a reduction, not a collective: use --redop %s (-o %s) with --op allreduce, reduce or reducescatter", s, r, r)
	}
	return 0, err
}

// parseLink reads --link-bw: auto, a preset name or a value with units.
func parseLink(s string) (float64, string, error) {
	if strings.EqualFold(s, bench.LinkAuto) {
		return 0, bench.LinkAuto, nil
	}
	for _, p := range units.LinkPresets {
		if strings.EqualFold(s, p.Name) {
			return p.GBps, fmt.Sprintf("preset %s: %s", p.Name, p.What), nil
		}
	}
	gbps, err := units.ParseBandwidth(s)
	if err != nil {
		return 0, "", fmt.Errorf("%w, or a preset (%s), or auto", err, presetNames())
	}
	return gbps, "given as " + s, nil
}

func presetHelp() string {
	var parts []string
	for _, p := range units.LinkPresets {
		parts = append(parts, fmt.Sprintf("%s %g GB/s", p.Name, p.GBps))
	}
	return strings.Join(parts, ", ")
}

func presetNames() string {
	var parts []string
	for _, p := range units.LinkPresets {
		parts = append(parts, p.Name)
	}
	return strings.Join(parts, ", ")
}

func names[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// parseTraffic sets Sweep.Traffic from --traffic, or else from nccl-tests'
// variables, and refuses --traffic where no collective of --op takes it.
func parseTraffic(p *bench.Plan, given bool, spec string, env traffic.Env) error {
	if !given {
		if env.Set {
			p.Traffic = env.Spec
		}
		return nil
	}
	sp, err := traffic.ParseSpec(spec)
	if err != nil {
		return fmt.Errorf("--%w", err) // "--traffic \"SPEC\": ..."
	}
	if !slices.ContainsFunc(p.Ops, func(op coll.Op) bool { return op.Desc().Variable() }) {
		return fmt.Errorf("--traffic %s: no collective of --op takes counts (alltoallv, allgatherv, reducescatterv)", spec)
	}
	p.Traffic = sp
	return nil
}
