package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// A program is a name of nccl-tests or hccl_test that this binary answers
// to when called by it (a symlink or hard link, which `hccl-test links DIR`
// makes): all_reduce_perf runs allreduce with nccl-tests' defaults,
// all_reduce_test with hccl_test's. Flags on the command line win over
// the defaults, which --help then shows.
type program struct {
	name string // as called: all_reduce_perf
	tool string // nccl-tests or hccl_test
	op   string // the collective, as --op names it
	// defaults are flag values that replace hccl-test's defaults, by
	// flag name; a flag on the command line wins over them.
	defaults map[string]string
	// step sets the step between sizes when neither -f nor -i is given, as
	// the tool does: nil keeps hccl-test's factor of 2.
	step func(minB, maxB int64) int64
}

// programSuffix is how each tool's names end.
var programSuffix = map[string]string{"_perf": "nccl-tests", "_test": "hccl_test"}

// programOps maps each tool's program names, less the suffix, to the
// collective they run; "" for one not implemented here yet.
var programOps = map[string]map[string]string{
	"nccl-tests": {
		"all_reduce": "allreduce", "all_gather": "allgather", "broadcast": "broadcast",
		"reduce_scatter": "reducescatter", "reduce": "reduce", "alltoall": "alltoall",
		"scatter": "scatter", "gather": "gather", "sendrecv": "sendrecv",
		"hypercube": "", "alltoallv": "alltoallv",
	},
	"hccl_test": {
		"all_reduce": "allreduce", "all_gather": "allgather", "broadcast": "broadcast",
		"reduce_scatter": "reducescatter", "reduce": "reduce", "alltoall": "alltoall",
		"scatter": "scatter",
		// alltoallvc (HcclAlltoAllVC) moves what alltoallv does, each rank
		// given the whole count matrix, as Args.Counts is here.
		"all_gatherv": "allgatherv", "alltoallv": "alltoallv", "alltoallvc": "alltoallv", "reduce_scatterv": "reducescatterv",
	},
}

// toolDefaults are each tool's defaults where they differ from
// hccl-test's. nccl-tests (2.19, src/common.cu): one rank per process
// (-t 1 -g 1), both placements printed, -a 1 (the mean over the ranks),
// -w 1, 32M; its additive step of 1M when -f is not given. hccl_test:
// 64M, -n 20, -w 10, out-of-place; its step of (e-b)/10 when -f is not
// given.
var toolDefaults = map[string]program{
	"nccl-tests": {
		defaults: map[string]string{"ranks": "1", "placement": "both", "average": "1",
			"warmup-iters": "1", "iters": "20", "minbytes": "32M", "maxbytes": "32M"},
		step: func(_, _ int64) int64 { return 1 << 20 },
	},
	"hccl_test": {
		defaults: map[string]string{"placement": "out", "warmup-iters": "10", "iters": "20",
			"minbytes": "64M", "maxbytes": "64M"},
		step: func(minB, maxB int64) int64 {
			if maxB <= minB {
				return 0 // one size: the factor never applies
			}
			return max((maxB-minB)/10, 1)
		},
	},
}

// programOf returns the program that argv0 names, nil for any name not
// in either tool's form (hccl-test, a copy under another name), or an
// error for a name in a tool's form that is not one of its programs or
// that runs a collective not implemented here.
func programOf(argv0 string) (*program, error) {
	name := filepath.Base(argv0)
	for suffix, tool := range programSuffix {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok || base == "" {
			continue
		}
		op, known := programOps[tool][base]
		switch {
		case !known:
			return nil, fmt.Errorf("%s: not a program of %s, so which collective to run is not known (%s programs: %s); call this binary hccl-test, or by one of those names (hccl-test links DIR makes them)",
				name, tool, possessive(tool), strings.Join(programNames(tool), " "))
		case op == "":
			return nil, fmt.Errorf("%s: %s %s is not implemented here yet; hccl-test algorithms lists the collectives that are", name, possessive(tool), base)
		}
		pr := toolDefaults[tool]
		pr.name, pr.tool, pr.op = name, tool, op
		pr.defaults = unionOf(pr.defaults, map[string]string{"op": op})
		return &pr, nil
	}
	return nil, nil
}

// possessive is name's possessive: nccl-tests', hccl_test's.
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// unionOf returns a and b in one new map, b winning.
func unionOf(a, b map[string]string) map[string]string {
	m := make(map[string]string, len(a)+len(b))
	for _, x := range []map[string]string{a, b} {
		for k, v := range x {
			m[k] = v
		}
	}
	return m
}

// programNames lists the names of tool ("nccl-tests", "hccl_test") that
// run here, or of both tools when tool is "", sorted.
func programNames(tool string) []string {
	var names []string
	for suffix, t := range programSuffix {
		if tool != "" && t != tool {
			continue
		}
		for base, op := range programOps[t] {
			if op != "" {
				names = append(names, base+suffix)
			}
		}
	}
	slices.Sort(names)
	return names
}

// applyDefaults gives every flag of fs that the command line did not set
// the program's default (after fs.Parse, before any flag is read), and
// shows it as the default in --help. A nil program changes nothing.
func (pr *program) applyDefaults(fs *pflag.FlagSet) error {
	if pr == nil {
		return nil
	}
	names := make([]string, 0, len(pr.defaults))
	for name := range pr.defaults {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			return fmt.Errorf("%s: no flag --%s for its default", pr.name, name) // a programming error, said as one line
		}
		f.DefValue = pr.defaults[name]
		if f.Changed {
			continue
		}
		if err := f.Value.Set(pr.defaults[name]); err != nil {
			return fmt.Errorf("%s: default --%s %s: %w", pr.name, name, pr.defaults[name], err)
		}
	}
	if pr.step == nil || fs.Changed("stepfactor") || fs.Changed("stepbytes") {
		return nil
	}
	minB, okMin := fs.Lookup("minbytes").Value.(*sizeValue)
	maxB, okMax := fs.Lookup("maxbytes").Value.(*sizeValue)
	step, okStep := fs.Lookup("stepbytes").Value.(*sizeValue)
	if !okMin || !okMax || !okStep {
		return fmt.Errorf("%s: the size flags are not sizes", pr.name)
	}
	if s := pr.step(int64(*minB), int64(*maxB)); s > 0 {
		*step = sizeValue(s)
	}
	return nil
}
