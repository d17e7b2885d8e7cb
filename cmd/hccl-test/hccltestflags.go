package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/dtype"
)

// hcclTestAliases maps hccl_test's long option names (build_longopts in
// its hccl_test_common.cc) that differ from the sweep's onto the sweep's.
// Its others are ours already: --minbytes, --maxbytes, --stepbytes,
// --stepfactor, --iters, --warmup_iters, --datatype, --root, --check; its
// --op, the reduction, is hcclTestOp's.
var hcclTestAliases = map[string]string{"npus": "ranks"}

// normalizeSweep is normalize with hccl_test's long names read as the
// sweep's (hcclTestAliases): --npus 8 is --ranks 8.
func normalizeSweep(fs *pflag.FlagSet, name string) pflag.NormalizedName {
	n := normalize(fs, name)
	if to, ok := hcclTestAliases[string(n)]; ok {
		return pflag.NormalizedName(to)
	}
	return n
}

// hcclTestOp reads hccl_test's --op, which names the reduction (--op sum):
// an --op whose every item is a reduction is --redop's value, and the
// collective stays the default (allreduce, or the program's: all_reduce_test).
// With --redop given too, which one was meant is not known: refused.
func hcclTestOp(fs *pflag.FlagSet, ops, redops *string) error {
	if !fs.Changed("op") {
		return nil
	}
	for _, item := range strings.Split(*ops, ",") {
		if _, err := dtype.ParseOp(strings.TrimSpace(item)); err != nil || strings.EqualFold(strings.TrimSpace(item), "all") {
			return nil // a collective (or a mistake parseOp names)
		}
	}
	if fs.Changed("redop") {
		return fmt.Errorf("--op %s with --redop %s: hccl_test's --op is the reduction, which is --redop (-o) here; give one of them", *ops, *redops)
	}
	*redops, *ops = *ops, fs.Lookup("op").DefValue
	return nil
}

// deviceFlag is one of hccl_test's flags that mean something only on
// Ascend NPUs.
type deviceFlag struct {
	short, long string
	why         string
	// offOK: the value 0 (off, hccl_test's default) asks for what runs
	// here anyway, and is accepted.
	offOK bool
}

// hcclTestDeviceFlags are hccl_test's flags for Ascend NPUs: a command line
// copied from hccl_test that turns one on is refused, saying why, rather
// than run as something it is not. Their short forms other than -s are
// nccl-tests' flags here (-t, -z, -m, -a); -s is no flag of nccl-tests'.
var hcclTestDeviceFlags = []deviceFlag{
	{"s", "nslb", "it turns on NSLB-DP, the load balancing of an Ascend cluster's network (any value does); ranks here talk over shared memory or TCP, with no such fabric", false},
	{"", "onlydevicetime", "it times the NPU's work alone; the ranks here are CPU threads or processes, timed by the host's clock around each op", true},
	{"", "zero_copy", "it lets HCCL move data straight between the NPUs' user buffers (Atlas A3); there are no NPU buffers here (shm's ranks read each other's buffers already)", true},
	{"", "symmetric_memory", "it registers a symmetric-memory window on the NPUs (Atlas A3, Ascend 950); buffers here are ordinary memory", true},
	{"", "accelerator", "it chooses the Ascend engine that expands each op (AI CPU, AIV, CCU); the collectives here run on the CPU", false},
}

// addDeviceFlags defines hcclTestDeviceFlags on fs, taking a value as
// hccl_test's do (-s 1, --zero_copy 1, --accelerator aiv), so that
// refuseDeviceFlags can name them.
func addDeviceFlags(fs *pflag.FlagSet) {
	for _, d := range hcclTestDeviceFlags {
		fs.StringP(normalizedName(d.long), d.short, "", "refused: means something only on Ascend NPUs")
	}
}

// refuseDeviceFlags refuses the first of hcclTestDeviceFlags that the
// command line turned on.
func refuseDeviceFlags(fs *pflag.FlagSet) error {
	for _, d := range hcclTestDeviceFlags {
		f := fs.Lookup(normalizedName(d.long))
		if f == nil || !f.Changed || (d.offOK && strings.TrimSpace(f.Value.String()) == "0") {
			continue
		}
		name := "--" + d.long
		if d.short != "" {
			name = "-" + d.short + "/" + name
		}
		return fmt.Errorf("%s %s: hccl_test's flag for Ascend NPUs has no meaning here: %s", name, f.Value, d.why)
	}
	return nil
}
