package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestHCCLTestLongNames runs hccl_test's command lines with its long
// option names (build_longopts in hccl_test_common.cc): each sets what its
// short form sets here, --op names the reduction, --npus the ranks, and
// its flags for NPUs are accepted where they ask for nothing (0).
func TestHCCLTestLongNames(t *testing.T) {
	long := []string{"--minbytes", "8K", "--maxbytes", "64K", "--stepfactor", "2", "--iters", "7", "--warmup_iters", "3",
		"--datatype", "fp16", "--op", "max", "--root", "1", "--check", "2", "--npus", "4", "--zero_copy", "0", "--onlydevicetime", "0",
		"--symmetric_memory", "0"}
	short := []string{"-b", "8K", "-e", "64K", "-f", "2", "-n", "7", "-w", "3", "-d", "fp16", "-o", "max", "-r", "1", "-c", "2", "-p", "4"}
	pl, _, err := parseFlags(long, io.Discard)
	if err != nil {
		t.Fatalf("hccl_test's long names: %v", err)
	}
	ps, _, err := parseFlags(short, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if pl.MinBytes != 8<<10 || pl.MaxBytes != 64<<10 || pl.StepFactor != 2 || pl.Iters != 7 || pl.Warmup != 3 || pl.Root != 1 ||
		pl.CheckIters != 2 || pl.Ranks != 4 || !slices.Equal(pl.DTypes, []dtype.DType{dtype.FP16}) ||
		!slices.Equal(pl.RedOps, []dtype.ReduceOp{dtype.Max}) || !slices.Equal(pl.Ops, []coll.Op{coll.AllReduce}) {
		t.Errorf("long names gave %+v", pl)
	}
	for _, f := range []struct {
		name      string
		long, sht any
	}{{"sizes", [3]int64{pl.MinBytes, pl.MaxBytes, pl.StepBytes}, [3]int64{ps.MinBytes, ps.MaxBytes, ps.StepBytes}},
		{"counts", [5]int{pl.Iters, pl.Warmup, pl.Root, pl.CheckIters, pl.Ranks}, [5]int{ps.Iters, ps.Warmup, ps.Root, ps.CheckIters, ps.Ranks}},
		{"lists", [3]string{names(pl.Ops)[0], names(pl.DTypes)[0], names(pl.RedOps)[0]}, [3]string{names(ps.Ops)[0], names(ps.DTypes)[0], names(ps.RedOps)[0]}},
	} {
		if f.long != f.sht {
			t.Errorf("%s: long names %v, short %v", f.name, f.long, f.sht)
		}
	}
	// hccl_test's --op with reductions, and a collective named with it.
	p, _, err := parseFlags([]string{"--op", "sum,min"}, io.Discard)
	if err != nil || !slices.Equal(p.RedOps, []dtype.ReduceOp{dtype.Sum, dtype.Min}) || !slices.Equal(p.Ops, []coll.Op{coll.AllReduce}) {
		t.Errorf("--op sum,min: %v %v %v", p.Ops, p.RedOps, err)
	}
}

// TestHCCLTestRefusals checks hccl_test's flags that mean something only
// on Ascend NPUs, and --op that is both hccl_test's and ours.
func TestHCCLTestRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", "1"}, "-s/--nslb 1: hccl_test's flag for Ascend NPUs has no meaning here: it turns on NSLB-DP"},
		{[]string{"--nslb", "0"}, "-s/--nslb 0: hccl_test's flag for Ascend NPUs"}, // any value turns it on in hccl_test
		{[]string{"--onlydevicetime", "1"}, "--onlydevicetime 1: hccl_test's flag for Ascend NPUs has no meaning here: it times the NPU's work alone"},
		{[]string{"--zero_copy", "1"}, "--zero_copy 1: hccl_test's flag for Ascend NPUs has no meaning here"},
		{[]string{"--zero-copy=1"}, "--zero_copy 1: "},
		{[]string{"--symmetric_memory", "1"}, "--symmetric_memory 1: "},
		{[]string{"--accelerator", "aiv"}, "--accelerator aiv: hccl_test's flag for Ascend NPUs has no meaning here: it chooses the Ascend engine"},
		{[]string{"--op", "max", "--redop", "sum"}, "--op max with --redop sum: hccl_test's --op is the reduction, which is --redop (-o) here; give one of them"},
		{[]string{"--op", "sum,allreduce"}, `--op: "sum" is a reduction, not a collective`},
		{[]string{"--npus", "x"}, `invalid argument "x" for "-p, --ranks" flag`},
		{[]string{"--onlydevicetime"}, "flag needs an argument"},
	} {
		_, _, err := parseFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.args, err, tc.want)
		}
	}
}
