package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/results"
)

// maxCycles is the most cycles -N may ask for other than 0 (no end), as
// --runs.
const maxCycles = 1_000_000

// runFlags are nccl-tests' flags about runs and reports: -N, -S, -M, -I,
// -J.
type runFlags struct {
	cycles, timestamps, memory, perIter int
}

// addCycleFlag defines -N on fs, the sweep's section, and returns the
// flags addReportFlags completes.
func addCycleFlag(fs *pflag.FlagSet) *runFlags {
	r := &runFlags{}
	fs.VarP(newCount(&r.cycles, 1), "run-cycles", "N", "repeat the whole sweep this many times, 0 until interrupted (Ctrl-C keeps every row measured), printing every cycle's rows with its number (as nccl-tests); --runs repeats it too but shows each row's median")
	arg(fs, "run-cycles", "N")
	return r
}

// addReportFlags defines -S, -M, -I and -J on fs, the outputs' section,
// into r; -J's file goes to o.ncclJSON.
func addReportFlags(fs *pflag.FlagSet, r *runFlags, o *options) {
	fs.VarP(newCount(&r.timestamps, 0), "report-timestamps", "S", "1: give every row the time it was measured (a timestamp column in the table, CSV and JSON)")
	arg(fs, "report-timestamps", "0|1")
	fs.VarP(newCount(&r.memory, 0), "memory", "M", "1: print the memory the run takes, part by part (the estimate --dry-run prints), before the rows")
	arg(fs, "memory", "0|1")
	fs.VarP(newCount(&r.perIter, 0), "per-iter-timing", "I", "1: per-iteration figures, as --stats (min, p50, p99, max and stddev of the iterations)")
	arg(fs, "per-iter-timing", "0|1")
	fs.StringVarP(&o.ncclJSON, "output-file", "J", "", "also write nccl-tests' JSON report (its schema version 3) to this file (- for stdout)")
	arg(fs, "output-file", "FILE")
}

// apply checks the flags' values and sets them on p. runsSet says whether
// --runs was given.
func (r *runFlags) apply(fs *pflag.FlagSet, p *bench.Plan) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"report-timestamps", r.timestamps}, {"memory", r.memory}, {"per-iter-timing", r.perIter}} {
		if f.v != 0 && f.v != 1 {
			fl := fs.Lookup(f.name)
			return fmt.Errorf("-%s/--%s %d: want 1 (on) or 0 (off)", fl.Shorthand, fl.Name, f.v)
		}
	}
	p.Timestamps, p.ReportMemory = r.timestamps == 1, r.memory == 1
	p.Stats = p.Stats || r.perIter == 1
	if !fs.Changed("run-cycles") {
		return nil
	}
	switch {
	case fs.Changed("runs"):
		return fmt.Errorf("-N/--run-cycles and --runs: give one of them, not both (-N prints every cycle, --runs each row's median)")
	case r.cycles < 0:
		return fmt.Errorf("-N/--run-cycles %d: want 0 (until interrupted) or a number of cycles", r.cycles)
	case r.cycles > maxCycles:
		return fmt.Errorf("-N/--run-cycles %d: at most %d, or 0 for until interrupted", r.cycles, maxCycles)
	case r.cycles == 0:
		p.Runs = bench.RunsForever
	default:
		p.Runs = r.cycles
	}
	p.Cycles = true
	return nil
}

// gpuFlag is one of nccl-tests' flags that mean nothing here: most only
// mean something on a GPU.
type gpuFlag struct {
	short, long string
	why         string
	gpu         bool // the flag is about the GPU
}

// gpuFlags are nccl-tests' flags that mean nothing here (most only on a GPU): a
// command line copied from nccl-tests that has one is refused, saying why,
// rather than run as something it is not.
var gpuFlags = []gpuFlag{
	{"G", "cudagraph", "CUDA graphs capture GPU work; the ranks here are CPU threads or processes with nothing to capture", true},
	{"R", "local_register", "it registers GPU buffers with NCCL; buffers here are ordinary memory that needs no registration", true},
	{"D", "device_implementation", "it runs NCCL's device-API kernels on the GPU; the collectives here run on the CPU", true},
	{"V", "device_cta_count", "it sets the CTAs (GPU thread blocks) of -D's kernels; there are none here", true},
	{"y", "stream_null", "it chooses the CUDA stream ops are launched on; there are no streams here", true},
	{"x", "cta_policy", "it sets NCCL's policy for CTAs (GPU thread blocks); there are none here", true},
	{"K", "per_iter_skip", "it drops the first iterations of -I's samples, which a GPU's first launches slow; the warm-up (-w) is never timed here", false},
}

// addGPUFlags defines gpuFlags on fs, taking a value as nccl-tests' do
// (-G 1, -G1, --cudagraph=1, --cudagraph 1), so that refuseGPUFlags can
// name them.
func addGPUFlags(fs *pflag.FlagSet) {
	for _, g := range gpuFlags {
		fs.StringP(normalizedName(g.long), g.short, "", "refused: means something only on a GPU")
		arg(fs, normalizedName(g.long), "N")
	}
}

// refuseGPUFlags refuses the first of gpuFlags that the command line gave.
func refuseGPUFlags(fs *pflag.FlagSet) error {
	for _, g := range gpuFlags {
		if fs.Changed(normalizedName(g.long)) {
			kind := "nccl-tests' flag for GPUs"
			if !g.gpu {
				kind = "nccl-tests' flag"
			}
			return fmt.Errorf("-%s/--%s: %s has no meaning here: %s", g.short, g.long, kind, g.why)
		}
	}
	return nil
}

// normalizedName is name as normalize spells it.
func normalizedName(name string) string { return string(normalize(nil, name)) }

// ncclJSONRun is what -J's report says of the run beyond its header: the
// command line, the environment that shapes a run (HCCL_*, NCCL_* and the
// Go runtime's; never a secret, which nccl-tests' full dump would
// include), the sweep's bounds and the process.
func ncclJSONRun(p bench.Plan) results.NCCLJSONRun {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		shapes := strings.HasPrefix(name, "HCCL_") || strings.HasPrefix(name, "NCCL_") ||
			slices.Contains([]string{"GOMAXPROCS", "GOGC", "GOMEMLIMIT"}, name)
		if shapes && !secretName(name) {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	caps := p.Caps()
	return results.NCCLJSONRun{
		Args: append([]string{programName}, p.Args...), Env: env,
		MinBytes: p.MinBytes, MaxBytes: p.MaxBytes, StepFactor: p.StepFactor, StepBytes: p.StepBytes,
		Pid: os.Getpid(), InProcess: caps.InProcess, PerProcess: p.PerProcess,
	}
}

// secretName reports whether an environment variable's name says it holds
// a secret (HCCL_TEST_SECRET, a token, a key, a password).
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"SECRET", "TOKEN", "KEY", "PASS", "CRED"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
