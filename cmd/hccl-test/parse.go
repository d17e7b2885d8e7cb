package main

import (
	"errors"
	"fmt"
	"github.com/hccl-test/hccl-test/internal/syslimits"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/kit"
	"github.com/hccl-test/hccl-test/units"
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

const examples = `
Examples:
  # allreduce of fp16 from 1 KiB to 256 MiB, doubling, on 8 in-process ranks
  hccl-test --op allreduce --datatype fp16 --minbytes 1024 --maxbytes 268435456 --stepfactor 2

  # every collective, every data type, 4 ranks, nccl-tests' short flags
  hccl-test --op all -d all -p 4 -b 8 -e 1M -f 4

  # allreduce with every reduction, in-place and out-of-place, against a 56 GB/s link
  hccl-test -o all --placement both --link-bw hccs -b 1K -e 64M --stats

Subcommands (each has its own --help):
  hccl-test compare [--threshold 5%] OLD NEW   compare two --bench (or --csv) files or logs
  hccl-test plot [-o out.png] FILE...          plot busbw and time against size
  hccl-test convert [--csv F] LOG...           nccl-tests, hccl_test, ... logs as CSV
  hccl-test scenario FILE                      run a training step, name its critical domain
  hccl-test algorithms                         list the algorithms of every collective
  hccl-test links DIR                          make all_reduce_perf, all_reduce_test, ... in DIR

Exit status: 0 success; 1 the run failed (an op, a rank, an output that failed
or a named pipe nobody opened within 10s, the memory guard); 2 bad input, nothing
was run; 3 wrong results; 128+N stopped by signal N: 129 SIGHUP, 130 SIGINT,
141 SIGPIPE or an output whose reader closed it (| head), 143 SIGTERM.
Whatever stops a run, every row measured is in every output that still works
and one line on stderr says why; a closed stdout stops the sweep.

Every chapter of the manual is in the repository's docs/ directory.
`

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
	fs := pflag.NewFlagSet(programName, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	fs.SortFlags = false

	ops := fs.String("op", "allreduce", "collectives, comma-separated, or all: "+strings.Join(names(coll.AllOps()), " "))
	dtypes := fs.StringP("datatype", "d", "fp32", "data types, comma-separated, or all: "+strings.Join(names(dtype.All()), " ")+" (also half, float, double, bfloat16, bfp16, fp8e4m3, fp8e5m2)")
	redops := fs.StringP("redop", "o", "sum", "reductions for allreduce, reduce, reducescatter, comma-separated, or all: "+strings.Join(names(dtype.AllOps()), " "))
	minB, maxB := sizeValue(p.MinBytes), sizeValue(p.MaxBytes)
	fs.VarP(&minB, "minbytes", "b", "smallest size: bytes with an optional K/M/G/T suffix, decimals allowed (8, 4K, 1.5M, 1G)")
	fs.VarP(&maxB, "maxbytes", "e", "largest size, as --minbytes; included when the steps land on it")
	factor := fs.Float64P("stepfactor", "f", p.StepFactor, "multiply the size by this each step (> 1)")
	var stepB sizeValue
	fs.VarP(&stepB, "stepbytes", "i", "add this many bytes each step instead of multiplying")
	fs.VarP(newCount(&p.Iters, p.Iters), "iters", "n", "timed iterations per row")
	fs.Var((*benchtimeValue)(&p.BenchTime), "benchtime", "run each row for at least this much timed work too (1s, 300ms), the slowest rank counting: the ranks agree on each row's count, which the CSV's iters reports (at most 1000000 a row; not on --backend sim, whose virtual time does not vary)")
	fs.VarP(newCount(&p.Warmup, p.Warmup), "warmup-iters", "w", "untimed iterations per row before the timed ones")
	check := new(int)
	fs.VarP(newCount(check, 1), "check", "c", "checked runs per row, after the timed ones (outside the timed region): 0 none; N on inputs filled anew each, stopping at the first with a wrong element, whose count the row reports (as nccl-tests' -c)")
	measure := addMeasureFlags(fs) // -a, -m, -z, -C, -u (measureflags.go)
	fs.VarP(newCount(&p.Root, p.Root), "root", "r", "root rank of broadcast, reduce, gather, scatter; -1 runs every root in turn")
	fs.VarP(newCount(&p.Ranks, p.Ranks), "ranks", "p", "number of ranks (nccl-tests' -p is parallel init and hccl_test's the NPUs per node; here it is the ranks); over tcp with -t or -g, the rank processes")
	threads := addThreadFlags(fs) // -t, -g (threads.go)
	fs.StringVar(&p.Backend, "backend", p.Backend, "transport: "+strings.Join(backends.Names(), " "))
	fs.StringVar(&p.Algo, "algo", p.Algo, "algorithm: auto (the one a cost model calibrated before the sweep predicts fastest), native (MPI's own, --backend mpi), or one of: "+strings.Join(coll.AllNames(), " ")+"; or several, comma-separated (auto,ring,rd), each row measured with each in turn. Without --algo, HCCL_ALGO in HCCL's form (level0:NA;level1:H-D_R) chooses")
	placement := fs.String("placement", "out", "out (out-of-place), in (in-place) or both")
	cache := fs.String("cache", "warm", "warm: every iteration reuses one buffer set, which small rows find in the cache (as nccl-tests); cold: rotate through sets twice the last-level cache, so the data comes from memory")
	addFaultFlags(fs, &p.Faults, sweepWorldHelp)
	envRetry := env.retry
	fs.Var(newCount(&p.Retry, 0), "retry", "run an op that failed on a transport error again, up to this many times (at most 10); without --retry, HCCL_OP_RETRY_ENABLE turns it on with HCCL_OP_RETRY_PARAMS' MaxCnt")
	hold, interval := durationValue(0), durationValue(0)
	if envRetry.enabled {
		hold, interval = durationValue(envRetry.hold), durationValue(envRetry.interval)
	}
	fs.Var(&hold, "retry-hold", "pause between a failure and the first re-run; with HCCL_OP_RETRY_ENABLE on, HCCL_OP_RETRY_PARAMS' HoldTime")
	fs.Var(&interval, "retry-interval", "pause between later re-runs; with HCCL_OP_RETRY_ENABLE on, HCCL_OP_RETRY_PARAMS' IntervalTime")
	fs.StringVar(&p.LayoutText, "groups", "", "split the world into communication domains, e.g. tp=4,dp=2 (tp, cp, ep, dp, pp; their product is the world size; tp varies fastest, as Megatron-LM lays ranks out)")
	topology := fs.String("topology", "", "how ranks sit on servers: servers=S,per-server=P (ranks numbered server by server), or auto: the ranks of one host are a server (tcp under a launcher); with --link-bw intra=...,inter=... util is against the link that bounds each op")
	groups := fs.String("group", "", "run the sweep inside every group of these domains at once, one domain after the other (e.g. tp or tp,dp); needs --groups")
	fusion := fs.String("fusion", "", "also measure each size as N collectives of size/N back to back, for each N in this list (e.g. 4 or 1,4,16,64), and report what fusing them gains")
	overlap := fs.String("overlap", "", "also run each collective started without blocking against this much synthetic compute (a duration, or auto: the collective's own time)")
	link := fs.String("link-bw", bench.LinkAuto, "link bandwidth that util is relative to: a value (64GB/s, 200Gbit/s), a preset ("+presetHelp()+"), or auto: measure it on this backend before the sweep; with --topology, intra=X,inter=Y for the links inside and between servers")
	simf := addSimFlags(fs) // --sim-alpha, --sim-reduce, --sim-copy (sim.go)
	addLaunchFlags(fs, &p.World, env, sweepWorldHelp)
	fs.BoolVar(&p.Stats, "stats", false, "add min, p50, p99 and max of the iteration times, and the cost model's prediction, to the table")
	fs.Var(newCount(&p.Runs, 1), "runs", "repeat the whole sweep this many times (benchstat wants about 10); the table shows each row's median")
	fs.StringVar(&o.csv, "csv", "", "also write every measurement to this CSV file (- for stdout, instead of the table)")
	fs.StringVar(&o.json, "json", "", "also write every measurement as JSON lines to this file (- for stdout)")
	runf := addRunFlags(fs, &o) // -N, -S, -M, -J (runflags.go)
	addGPUFlags(fs)
	fs.StringVar(&o.bench, "bench", "", "also write Go benchmark format, for benchstat, to this file (- for stdout)")
	fs.BoolVar(&o.dryRun, "dry-run", false, fmt.Sprintf("print the plan, the memory the run takes part by part, and an estimate of the time, and exit (a plan may have at most %d sizes and %d rows, all runs counted)", bench.MaxSizes, bench.MaxRows))
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	help := fs.BoolP("help", "h", false, "show this help")

	if err := fs.Parse(args); err != nil {
		return p, o, err
	}
	if err := calledAs.applyDefaults(fs); err != nil { // all_reduce_perf's defaults (programs.go)
		return p, o, err
	}
	if *help {
		fmt.Fprintf(helpOut, "Usage: %s [flags]\n\nSweeps collectives over sizes, data types and reductions, checks every result,\nand reports time, algbw, busbw and link utilization per row.\n\n", programName)
		writeFlagHelp(helpOut, fs, helpSections)
		fmt.Fprint(helpOut, envHelp, examples)
		return p, o, errHelpShown
	}
	if err := refuseGPUFlags(fs); err != nil {
		return p, o, err
	}
	if err := refuseForeignFlags(fs, p.Backend); err != nil {
		return p, o, err
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
	p.MinBytes, p.MaxBytes, p.StepFactor, p.StepBytes = int64(minB), int64(maxB), *factor, int64(stepB)
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
		if p.Topology, err = kit.ParseTopology(*topology, p.Ranks); err != nil {
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
	if err := simf.apply(&p.Links, p.Backend); err != nil {
		return p, o, err
	}
	if p.NoPayload {
		p.Check = false // nothing to check
	}
	p.RetryHold, p.RetryInterval = hold.duration(), interval.duration()
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
