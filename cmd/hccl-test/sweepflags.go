package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/world"
)

// sweepFlags are the sweep's flags, defined section by section: each
// section defines its flags, with their help, in the order --help lists
// them, and fs joins the sections. Flags that set a field of the plan or
// the options directly set it when parsed; the others are read from here
// by parseFlags.
type sweepFlags struct {
	sections []*flagSection
	fs       *pflag.FlagSet // every section's flags, for parsing

	own                     ownFlags // the backends' own (ownflags.go)
	ops, dtypes, redops     *string
	minB, maxB, stepB       sizeValue
	factor                  *float64
	check                   int
	placement, cache        *string
	hold, interval          durationValue
	topology, link          *string
	groups, fusion, overlap *string
	traffic                 *string
	help                    *bool
	measure                 *measureFlags
	threads                 *threadFlags
	runf                    *runFlags
}

// newSweepFlags defines the sweep's flags into p and o, with p's defaults
// and env's (env.go).
func newSweepFlags(p *bench.Plan, o *options, env environment) *sweepFlags {
	f := &sweepFlags{}
	f.sections = []*flagSection{
		f.sweepSection(p),
		f.measureSection(),
		f.backendSection(p, env),
		algoSection(p),
		f.faultSection(p, env),
		f.domainSection(p),
		f.outputSection(p, o),
		gpuSection(),
		deviceSection(),
	}
	var own []*flagSection
	f.own, own = defineOwnFlags(backends.With(func(backends.Caps) bool { return true })) // ownflags.go
	f.sections = append(f.sections, own...)
	f.fs = joinSections(programName, f.sections...)
	f.fs.SetNormalizeFunc(normalizeSweep) // hccl_test's --npus too (hccltestflags.go)
	return f
}

// sweepSection: what is swept, and how often each row runs.
func (f *sweepFlags) sweepSection(p *bench.Plan) *flagSection {
	s := newFlagSection("Sweep")
	f.ops = s.String("op", "allreduce", "collectives, comma-separated, or all: "+strings.Join(names(coll.AllOps()), " ")+"; a reduction (sum, max, ...) is hccl_test's --op, read as --redop")
	arg(s.FlagSet, "op", "LIST")
	f.dtypes = s.StringP("datatype", "d", "fp32", "data types, comma-separated, or all: "+strings.Join(names(dtype.All()), " ")+" (also half, float, double, bfloat16, bfp16, fp8e4m3, fp8e5m2)")
	arg(s.FlagSet, "datatype", "LIST")
	f.redops = s.StringP("redop", "o", "sum", "reductions for allreduce, reduce, reducescatter, comma-separated, or all: "+strings.Join(names(dtype.AllOps()), " "))
	arg(s.FlagSet, "redop", "LIST")
	f.minB, f.maxB = sizeValue(p.MinBytes), sizeValue(p.MaxBytes)
	s.VarP(&f.minB, "minbytes", "b", "smallest size: bytes with an optional K/M/G/T suffix, decimals allowed (8, 4K, 1.5M, 1G)")
	arg(s.FlagSet, "minbytes", "SIZE")
	s.VarP(&f.maxB, "maxbytes", "e", "largest size, as --minbytes; included when the steps land on it")
	arg(s.FlagSet, "maxbytes", "SIZE")
	f.factor = s.Float64P("stepfactor", "f", p.StepFactor, "multiply the size by this each step (> 1)")
	arg(s.FlagSet, "stepfactor", "X")
	s.VarP(&f.stepB, "stepbytes", "i", "add this many bytes each step instead of multiplying")
	arg(s.FlagSet, "stepbytes", "SIZE")
	s.VarP(newCount(&p.Iters, p.Iters), "iters", "n", "timed iterations per row")
	arg(s.FlagSet, "iters", "N")
	s.Var((*benchtimeValue)(&p.BenchTime), "benchtime", "run each row for at least this much timed work too (1s, 300ms), the slowest rank counting: the ranks agree on each row's count, which the CSV's iters reports (at most 1000000 a row; not on --backend sim, whose virtual time does not vary)")
	arg(s.FlagSet, "benchtime", "DURATION")
	s.VarP(newCount(&p.Warmup, p.Warmup), "warmup-iters", "w", "untimed iterations per row before the timed ones")
	arg(s.FlagSet, "warmup-iters", "N")
	s.VarP(newCount(&f.check, 1), "check", "c", "checked runs per row, after the timed ones (outside the timed region): 0 none; N on inputs filled anew each, stopping at the first with a wrong element, whose count the row reports (as nccl-tests' -c)")
	arg(s.FlagSet, "check", "N")
	s.VarP(newCount(&p.Root, p.Root), "root", "r", "root rank of broadcast, reduce, gather, scatter; -1 runs every root in turn")
	arg(s.FlagSet, "root", "RANK")
	f.placement = s.String("placement", "out", "out (out-of-place), in (in-place) or both")
	arg(s.FlagSet, "placement", "out|in|both")
	f.cache = s.String("cache", "warm", "warm: every iteration reuses one buffer set, which small rows find in the cache (as nccl-tests); cold: rotate through sets twice the last-level cache, so the data comes from memory")
	arg(s.FlagSet, "cache", "warm|cold")
	s.Var(newCount(&p.Runs, 1), "runs", "repeat the whole sweep this many times (benchstat wants about 10); the table shows each row's median")
	arg(s.FlagSet, "runs", "N")
	f.runf = addCycleFlag(s.FlagSet) // -N (runflags.go)
	return s
}

// measureSection: how a row is measured, as nccl-tests' -a -m -z -C -u.
func (f *sweepFlags) measureSection() *flagSection {
	s := newFlagSection("Measurement (nccl-tests' -a -m -z -C -u)")
	f.measure = addMeasureFlags(s.FlagSet) // measureflags.go
	return s
}

// backendSection: the transport, the ranks and how they meet.
func (f *sweepFlags) backendSection(p *bench.Plan, env environment) *flagSection {
	s := newFlagSection("Backend and launch")
	s.StringVar(&p.Backend, "backend", p.Backend, "transport: "+strings.Join(backends.Names(), " ")+"; under mpirun, mpiexec, srun or torchrun, without --backend, "+world.LaunchedBackend()+": the launched processes are one world")
	arg(s.FlagSet, "backend", "NAME")
	s.VarP(newCount(&p.Ranks, p.Ranks), "ranks", "p", "number of ranks (nccl-tests' -p is parallel init; here it is the ranks); over tcp with -t or -g, the rank processes; under mpirun, mpiexec or srun, the ranks per node, as hccl_test's (NPUs per node): it must agree with the launcher, whose process count makes the world; hccl_test's --npus is this flag")
	arg(s.FlagSet, "ranks", "N")
	f.threads = addThreadFlags(s.FlagSet)                    // -t, -g (threads.go)
	addLaunchFlags(s.FlagSet, &p.World, env, sweepWorldHelp) // worldflags.go
	f.topology = s.String("topology", "", "how ranks sit on servers: servers=S,per-server=P (ranks numbered server by server), or auto: the ranks of one host are a server (tcp under a launcher); with --link-bw intra=...,inter=... util is against the link that bounds each op")
	arg(s.FlagSet, "topology", "SPEC")
	f.link = s.String("link-bw", bench.LinkAuto, "link bandwidth that util is relative to: a value (64GB/s, 200Gbit/s), a preset ("+presetHelp()+"), or auto: measure it on this backend before the sweep; with --topology, intra=X,inter=Y for the links inside and between servers")
	arg(s.FlagSet, "link-bw", "RATE|PRESET|auto")
	return s
}

// algoSection: which algorithms run.
func algoSection(p *bench.Plan) *flagSection {
	s := newFlagSection("Algorithms")
	s.StringVar(&p.Algo, "algo", p.Algo, "algorithm: auto (the one a cost model calibrated before the sweep predicts fastest), native (MPI's own, --backend mpi), or one of: "+strings.Join(coll.AllNames(), " ")+"; or several, comma-separated (auto,ring,rd), each row measured with each in turn. Without --algo, HCCL_ALGO in HCCL's form (level0:NA;level1:H-D_R) chooses")
	arg(s.FlagSet, "algo", "NAME[,NAME...]")
	return s
}

// faultSection: faults injected, and re-running the ops they fail.
func (f *sweepFlags) faultSection(p *bench.Plan, env environment) *flagSection {
	s := newFlagSection("Faults")
	addFaultFlags(s.FlagSet, &p.Faults, sweepWorldHelp) // worldflags.go
	s.Var(newCount(&p.Retry, 0), "retry", "run an op that failed on a transport error again, up to this many times (at most 10); without --retry, HCCL_OP_RETRY_ENABLE turns it on with HCCL_OP_RETRY_PARAMS' MaxCnt")
	arg(s.FlagSet, "retry", "N")
	if env.retry.enabled {
		f.hold, f.interval = durationValue(env.retry.hold), durationValue(env.retry.interval)
	}
	s.Var(&f.hold, "retry-hold", "pause between a failure and the first re-run; with HCCL_OP_RETRY_ENABLE on, HCCL_OP_RETRY_PARAMS' HoldTime")
	arg(s.FlagSet, "retry-hold", "DURATION")
	s.Var(&f.interval, "retry-interval", "pause between later re-runs; with HCCL_OP_RETRY_ENABLE on, HCCL_OP_RETRY_PARAMS' IntervalTime")
	arg(s.FlagSet, "retry-interval", "DURATION")
	return s
}

// domainSection: communication domains, fusion and overlap.
func (f *sweepFlags) domainSection(p *bench.Plan) *flagSection {
	s := newFlagSection("Domains")
	s.StringVar(&p.LayoutText, "groups", "", "split the world into communication domains, e.g. tp=4,dp=2 (tp, cp, ep, dp, pp; their product is the world size; tp varies fastest, as Megatron-LM lays ranks out)")
	arg(s.FlagSet, "groups", "SPEC")
	f.groups = s.String("group", "", "run the sweep inside every group of these domains at once, one domain after the other (e.g. tp or tp,dp); needs --groups")
	arg(s.FlagSet, "group", "LIST")
	f.fusion = s.String("fusion", "", "also measure each size as N collectives of size/N back to back, for each N in this list (e.g. 4 or 1,4,16,64), and report what fusing them gains")
	arg(s.FlagSet, "fusion", "N[,N...]")
	f.overlap = s.String("overlap", "", "also run each collective started without blocking against this much synthetic compute (a duration, or auto: the collective's own time)")
	arg(s.FlagSet, "overlap", "DURATION|auto")
	f.traffic = s.String("traffic", "", "the counts of alltoallv, allgatherv and reducescatterv (docs/traffic.md): file:PATH (nccl-tests' matrix), spread[:spread=F], uniform, zipf[:s=F] or hot[:hot=N,share=F], a routing taking the keys tokens, hidden, experts, topk, seed, draw (iter or fixed) and place (block or cyclic), e.g. zipf:s=1.2,tokens=0,topk=8; default: nccl-tests' variables (MATRIX_FILE or SPREAD under NCCL_TESTS_ALLTOALLV_), else its pattern (spread)")
	arg(s.FlagSet, "traffic", "SPEC")
	return s
}

// outputSection: what is written where, and what is reported.
func (f *sweepFlags) outputSection(p *bench.Plan, o *options) *flagSection {
	s := newFlagSection("Outputs")
	s.BoolVar(&p.Stats, "stats", false, "add min, p50, p99 and max of the iteration times, and the cost model's prediction, to the table")
	s.StringVar(&o.csv, "csv", "", "also write every measurement to this CSV file (- for stdout, instead of the table)")
	arg(s.FlagSet, "csv", "FILE")
	s.StringVar(&o.json, "json", "", "also write every measurement as JSON lines to this file (- for stdout)")
	arg(s.FlagSet, "json", "FILE")
	s.StringVar(&o.bench, "bench", "", "also write Go benchmark format, for benchstat, to this file (- for stdout)")
	arg(s.FlagSet, "bench", "FILE")
	s.BoolVar(&o.dryRun, "dry-run", false, fmt.Sprintf("print the plan, the memory the run takes part by part, and an estimate of the time, and exit (a plan may have at most %d sizes and %d rows, all runs counted)", bench.MaxSizes, bench.MaxRows))
	s.BoolVar(&o.version, "version", false, "print the version and exit")
	f.help = s.BoolP("help", "h", false, "show this help")
	addReportFlags(s.FlagSet, f.runf, o) // -S, -M, -I, -J (runflags.go)
	return s
}

// gpuSection: nccl-tests' flags that mean nothing here, refused.
func gpuSection() *flagSection {
	s := newFlagSection("nccl-tests' flags with no meaning here (refused, docs/nccl-tests.md)")
	addGPUFlags(s.FlagSet) // runflags.go
	return s
}

// deviceSection: hccl_test's flags for Ascend NPUs, refused with a reason.
func deviceSection() *flagSection {
	s := newFlagSection("hccl_test's flags for Ascend NPUs (refused, docs/nccl-tests.md)")
	addDeviceFlags(s.FlagSet) // hccltestflags.go
	return s
}

// sweepAbout is the sweep's --help before its flags.
const sweepAbout = `Sweeps collectives over sizes, data types and reductions, checks every result,
and reports time, algbw, busbw and link utilization per row.`

// sweepExamples is the sweep's --help after the environment.
const sweepExamples = `Examples:
  # allreduce of fp16 from 1 KiB to 256 MiB, doubling, on 8 in-process ranks
  hccl-test --op allreduce --datatype fp16 --minbytes 1024 \
    --maxbytes 268435456 --stepfactor 2

  # every collective, every data type, 4 ranks, nccl-tests' short flags
  hccl-test --op all -d all -p 4 -b 8 -e 1M -f 4

  # allreduce with every reduction, in and out of place, on a 56 GB/s link
  hccl-test -o all --placement both --link-bw hccs -b 1K -e 64M --stats`

// sweepExit is the end of the sweep's --help, after the commands.
const sweepExit = `Exit status: 0 success; 1 the run failed (an op, a rank, an output that failed
or a named pipe nobody opened within 10s, the memory guard); 2 bad input, nothing
was run; 3 wrong results; 128+N stopped by signal N: 129 SIGHUP, 130 SIGINT,
141 SIGPIPE or an output whose reader closed it (| head), 143 SIGTERM.
Whatever stops a run, every row measured is in every output that still works
and one line on stderr says why; a closed stdout stops the sweep.

Every chapter of the manual is in the repository's docs/ directory.`

// envColumn is the widest left column of --help's list of variables.
const envColumn = 24

// writeSweepHelp writes the sweep's --help: its flags section by section,
// the environment (env.go), examples, the commands (the table commands)
// and the exit status, within screenWidth.
func writeSweepHelp(w io.Writer, f *sweepFlags) {
	writeUsage(w, usageOf(""))
	writeText(w, screenWidth, maxFlagColumn, sweepAbout)
	fmt.Fprintln(w)
	writeFlagHelp(w, screenWidth, f.fs, f.sections...)
	fmt.Fprintln(w)
	writeText(w, screenWidth, envColumn, envHelp)
	fmt.Fprintln(w)
	writeText(w, screenWidth, maxFlagColumn, sweepExamples)
	fmt.Fprintln(w)
	writeCommandList(w, screenWidth)
	fmt.Fprintln(w)
	writeText(w, screenWidth, maxFlagColumn, sweepExit)
}
