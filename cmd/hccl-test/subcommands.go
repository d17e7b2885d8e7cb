package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/results/plot"
)

// exitRegressed is compare's exit code when a row got slower by more than
// --threshold, with significance.
const exitRegressed = 4

// runCompare is `hccl-test compare OLD NEW`: it pairs the rows of two files
// written with --bench (or --csv) and prints old, new, delta and p-value per
// row, as benchstat does.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	threshold := fs.String("threshold", "", "exit with status 4 when a row got worse by more than this, with significance (5% or 0.05)")
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "compare", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: %s compare [flags] OLD NEW\n\nCompares two files written with --bench (or --csv), row by row, with\nmedians, confidence intervals and a Mann-Whitney U test, as benchstat does.\n\nFlags:\n%s", programName, fs.FlagUsages())
		return exitOK
	}
	if fs.NArg() != 2 {
		return usageError(stderr, "compare", errors.New("want two files, OLD and NEW"))
	}
	opt := results.CompareOptions{Alpha: *alpha}
	if *threshold != "" {
		t, err := parseFraction(*threshold)
		if err != nil {
			return usageError(stderr, "compare", fmt.Errorf("--threshold %s: %w", *threshold, err))
		}
		opt.Threshold = t
	}
	if err := opt.Validate(); err != nil { // "compare: alpha NaN: ..." names the flag
		return usageError(stderr, "compare", errors.New("--"+strings.TrimPrefix(err.Error(), "compare: ")))
	}
	old, err := results.ReadSamples(fs.Arg(0))
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	cur, err := results.ReadSamples(fs.Arg(1))
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	cs := results.Compare(old, cur, opt)
	if len(cs) == 0 { // a gate that compared nothing has not passed
		return usageError(stderr, "compare", noCommonRows(old, cur))
	}
	if *threshold != "" && !slices.ContainsFunc(cs, func(c results.Comparison) bool { return results.Detectable(c.OldN, c.NewN, opt.Alpha) }) {
		// Nor has a gate that could not have failed.
		return usageError(stderr, "compare", fmt.Errorf("--threshold %s: no row was measured often enough to show a change "+
			"(%s: %d and %d measurements; the U test at --alpha %v needs about 4 a side): write the files with --runs 6 or more",
			*threshold, cs[0].Name, cs[0].OldN, cs[0].NewN, cmp.Or(opt.Alpha, 0.05)))
	}
	err = results.WriteComparison(stdout, cs, fs.Arg(0), fs.Arg(1))
	if err == nil {
		err = results.WriteNotes(stdout, old, cur, fs.Arg(0), fs.Arg(1))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s compare: %s\n", programName, oneLine(err))
		return exitFailed
	}
	if *threshold != "" { // --threshold 0: any significant change for the worse
		if bad := results.Regressions(cs, opt.Threshold); len(bad) > 0 {
			fmt.Fprintf(stderr, "%s compare: %d rows got worse by more than %s: first %s (%s %+.1f%%)\n",
				programName, len(bad), *threshold, bad[0].Name, bad[0].Unit, 100*bad[0].Delta)
			return exitRegressed
		}
	}
	return exitOK
}

// runPlot is `hccl-test plot FILE... -o out.png`.
func runPlot(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("plot", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.StringP("output", "o", "hccl-test.png", "image to write: .png or .svg")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "plot", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: %s plot [-o out.png|out.svg] FILE...\n\nDraws bus bandwidth and time against size from files written with --csv\nor --bench: one line per file and per op, data type, reduction, root,\ngroup, bucket count, algorithm and placement, each point one measured row\n(of a row's --runs, the run with the median time), at most 64 lines.\n\nFlags:\n%s", programName, fs.FlagUsages())
		return exitOK
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "plot", errors.New("want at least one file written with --csv or --bench"))
	}
	// The image's format, and whether it would replace an input, are known
	// before anything is read.
	if err := plot.CheckOutput(*out, fs.Args()...); err != nil {
		return usageError(stderr, "plot", fmt.Errorf("--output %w", err))
	}
	d, err := plot.Load(fs.Args()...)
	if err != nil { // the line says "plot" once
		return usageError(stderr, "plot", errors.New(strings.TrimPrefix(err.Error(), "plot: ")))
	}
	if err := plot.Write(d, *out); err != nil {
		fmt.Fprintf(stderr, "%s plot: %s\n", programName, oneLine(err))
		return exitFailed
	}
	return exitOK
}

// runAlgorithms is `hccl-test algorithms`: one line per collective, its name
// then the algorithms that serve it, for scripts that sweep them all.
func runAlgorithms(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintf(stdout, "Usage: %s algorithms\n\nLists each collective and the algorithms --algo can name for it.\n", programName)
			return exitOK
		}
		return usageError(stderr, "algorithms", fmt.Errorf("unexpected argument %q", args[0]))
	}
	for _, op := range coll.AllOps() {
		fmt.Fprintf(stdout, "%s %s\n", op, strings.Join(coll.Names(op), " "))
	}
	return exitOK
}

func usageError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s %s: %s (see %s %s --help)\n", programName, cmd, oneLine(err), programName, cmd)
	return exitUsage
}

// noCommonRows says why Compare paired no row of old with one of cur:
// no row name in common, with the first of each file, or no unit.
func noCommonRows(old, cur *results.Samples) error {
	onlyOld, onlyNew := results.Unpaired(old, cur)
	if len(onlyOld) == 0 || len(onlyNew) == 0 {
		return fmt.Errorf("%s and %s name the same rows but measure them in no common unit, so nothing was compared", old.Path, cur.Path)
	}
	rows := func(names []string) string {
		return fmt.Sprintf("%d row%s such as %s", len(names), map[bool]string{true: "s"}[len(names) > 1], names[0])
	}
	return fmt.Errorf("%s and %s have no row in common, so nothing was compared (%s: %s; %s: %s)",
		old.Path, cur.Path, old.Path, rows(onlyOld), cur.Path, rows(onlyNew))
}

// parseFraction reads 5% or 0.05 as 0.05. A bare number of 1 or more is
// refused: "5" is more likely to mean 5% than 500%, and a gate at 500%
// would pass nearly everything.
func parseFraction(s string) (float64, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0) || math.IsInf(f, 0) {
		return 0, errors.New("want a percentage such as 5% or a fraction such as 0.05")
	}
	if !pct && f >= 1 {
		return 0, fmt.Errorf("a fraction of %v is %v%%: write %v%% for %v percent, or %v%% if you mean it", f, 100*f, f, f, 100*f)
	}
	if pct {
		f /= 100
	}
	return f, nil
}
