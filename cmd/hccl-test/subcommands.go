package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/results/plot"
)

// compare's exit codes past the common ones (exitOK, exitUsage, ...).
const (
	// exitRegressed: a row got worse by more than --threshold with
	// significance, or its bus bandwidth is below --min-busbw.
	exitRegressed = 4
	// exitUndecided: a row's median got worse by more than --threshold,
	// but with too few measurements for the U test to decide; the message
	// names the runs a side that would.
	exitUndecided = 5
)

// compareCommand is `hccl-test compare`.
var compareCommand = command{
	name: "compare", args: "[flags] OLD NEW", summary: "compare two --bench (or --csv) files or logs",
	run: withStdio(runCompare),
}

// compareHelp is compare's --help text before the flags.
const compareHelp = `Compares two files written with --bench (or --csv), row by row, with
medians, confidence intervals and a Mann-Whitney U test, as benchstat does.
Either file may be a log of nccl-tests, rccl-tests, hccl_test or nccom-test
(see convert): one mean per row, whose change is shown marked "?", as no
test can decide it with one measurement a side.

Exit status: 0 no gate failed; 2 bad flags or files; 4 a row got worse by
more than --threshold with significance, or a row of NEW has a median bus
bandwidth below --min-busbw; 5 a row's median got worse by more than
--threshold but it was measured too few times for the U test to reach
--alpha (never a pass: the message says how many runs a side would decide
it).`

// runCompare is `hccl-test compare OLD NEW`: it pairs the rows of two files
// written with --bench (or --csv) and prints old, new, delta and p-value per
// row, as benchstat does.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	threshold := fs.String("threshold", "", "exit with status 4 when a row got worse by more than this, with significance (5% or 0.05); 5 when too few runs to decide")
	minBusBW := fs.String("min-busbw", "", "exit with status 4 when a row of NEW has a median bus bandwidth below this many GB/s (as NCCL_TESTS_MIN_BW)")
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "compare", err)
	}
	if *help {
		writeCommandHelp(stdout, "compare", compareHelp, fs, "")
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
	if err := opt.Validate(); err != nil { // "alpha NaN: ..." names the flag
		return usageError(stderr, "compare", errors.New("--"+err.Error()))
	}
	var minBW float64
	if *minBusBW != "" {
		var err error
		if minBW, err = parseGBps(*minBusBW); err != nil {
			return usageError(stderr, "compare", fmt.Errorf("--min-busbw %s: %w", *minBusBW, err))
		}
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
	if minBW > 0 {
		if _, rows := results.BusBWBelow(cur, minBW); rows == 0 { // a gate that checked nothing
			return usageError(stderr, "compare", fmt.Errorf("--min-busbw %s: %s has no bus bandwidth to check", *minBusBW, cur.Path))
		}
	}
	err = results.WriteComparison(stdout, cs, fs.Arg(0), fs.Arg(1))
	if err == nil {
		err = results.WriteNotes(stdout, old, cur, fs.Arg(0), fs.Arg(1))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s compare: %s\n", programName, oneLine(err))
		return exitFailed
	}
	return gate(stderr, cs, old, cur, opt, *threshold, *minBusBW, minBW)
}

// gate applies compare's gates to cs, the rows of cur (the new file), and
// says on stderr, a line per gate, what failed: the regressions past
// --threshold and the bus bandwidths below --min-busbw (exitRegressed),
// else the rows whose medians moved past --threshold with too few
// measurements to decide (exitUndecided), naming the runs that would.
func gate(stderr io.Writer, cs []results.Comparison, old, cur *results.Samples, opt results.CompareOptions,
	threshold, minBusBW string, minBW float64) int {
	code := exitOK
	if threshold != "" { // --threshold 0: any significant change for the worse
		if bad := results.Regressions(cs, opt.Threshold); len(bad) > 0 {
			fmt.Fprintf(stderr, "%s compare: %s got worse by more than %s: first %s (%s %+.1f%%)\n",
				programName, rowCount(bad), threshold, bad[0].Name, bad[0].Unit, 100*bad[0].Delta)
			code = exitRegressed
		}
	}
	if minBW > 0 {
		if below, rows := results.BusBWBelow(cur, minBW); len(below) > 0 {
			fmt.Fprintf(stderr, "%s compare: %d of %d rows of %s have a bus bandwidth below --min-busbw %s: first %s (%.4g GB/s, median of %d)\n",
				programName, len(below), rows, cur.Path, minBusBW, below[0].Name, below[0].Median, below[0].N)
			code = exitRegressed
		}
	}
	if threshold != "" {
		if und := results.Undecided(cs, opt.Threshold, opt.Alpha); len(und) > 0 {
			alpha := cmp.Or(opt.Alpha, 0.05)
			need := "no number of runs"
			if n := results.RunsToDecide(opt.Alpha); n > 0 {
				need = runsHint(n, old, cur) // comparehint.go
			}
			fmt.Fprintf(stderr, "%s compare: %s got worse by more than %s with too few measurements to decide: "+
				"first %s (%s %+.1f%%, %d and %d measurements); the U test can reach --alpha %v with %s\n",
				programName, rowCount(und), threshold, und[0].Name, und[0].Unit, 100*und[0].Delta, und[0].OldN, und[0].NewN, alpha, need)
			if code == exitOK {
				code = exitUndecided
			}
		}
	}
	return code
}

// rowCount says how many rows cs compares, each counted once whatever its
// units: "1 row", "3 rows".
func rowCount(cs []results.Comparison) string {
	names := map[string]bool{}
	for _, c := range cs {
		names[c.Name] = true
	}
	if len(names) == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", len(names))
}

// parseGBps reads a bandwidth in GB/s, "12.5" or "12.5GB/s": a positive
// finite number, in no other unit.
func parseGBps(s string) (float64, error) {
	num := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "GB/s"))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, errors.New("want a bus bandwidth in GB/s above 0, such as 12.5 or 12.5GB/s")
	}
	return f, nil
}

// plotCommand is `hccl-test plot`.
var plotCommand = command{
	name: "plot", args: "[-o out.png|out.svg] FILE...", summary: "plot busbw and time against size",
	run: withStdio(runPlot),
}

// plotHelp is plot's --help text before the flags.
const plotHelp = `Draws bus bandwidth and time against size from files written with --csv
or --bench, or logs of nccl-tests, rccl-tests, hccl_test or nccom-test
(see convert): one line per file and per op, data type, reduction, root,
group, bucket count, algorithm and placement, each point one measured row
(of a row's --runs, the run with the median time), at most 64 lines.`

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
		writeCommandHelp(stdout, "plot", plotHelp, fs, "")
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
	if err != nil { // the package names no command: the line says "plot" once
		return usageError(stderr, "plot", err)
	}
	if err := plot.Write(d, *out); err != nil {
		fmt.Fprintf(stderr, "%s plot: %s\n", programName, oneLine(err))
		return exitFailed
	}
	if !fs.Changed("output") { // a file the user did not name: say where it is
		where := *out
		if abs, err := filepath.Abs(where); err == nil {
			where = abs
		}
		fmt.Fprintf(stderr, "%s plot: wrote %s (no -o given; -o names the image, .png or .svg)\n", programName, quotePath(where))
	}
	return exitOK
}

// algorithmsCommand is `hccl-test algorithms`.
var algorithmsCommand = command{
	name: "algorithms", summary: "list the algorithms of every collective",
	run: withStdio(runAlgorithms),
}

// runAlgorithms is `hccl-test algorithms`: one line per collective, its name
// then the algorithms that serve it, for scripts that sweep them all.
func runAlgorithms(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			writeCommandHelp(stdout, "algorithms", "Lists each collective and the algorithms --algo can name for it.", nil, "")
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
