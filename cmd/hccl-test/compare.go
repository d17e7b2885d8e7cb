package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/results"
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
	name: "compare", args: "[flags] OLD NEW...", summary: "compare --bench or --csv files or logs, as benchstat",
	run: withStdio(runCompare),
}

// compareHelp is compare's --help text before the flags.
const compareHelp = `Compares files written with --bench (or --csv), row by row, with medians,
confidence intervals and a Mann-Whitney U test, as benchstat does: each
file is a column, and every column after the first is compared with the
first; LABEL=FILE labels a column (O=old.txt N=new.txt). Any file may be a
log of nccl-tests, rccl-tests, hccl_test or nccom-test (see convert): one mean per row, whose change is shown marked
"?", as no test can decide it with one measurement a side.

-filter, -table, -row, -col and -ignore are benchstat's, in its syntax
(go doc golang.org/x/perf/benchproc/syntax), and group the measurements
as benchstat does, by the keys of the rows' names (/op parts such as
/ranks, /dtype, /size) and of the files' configuration (host, backend,
...), with .name, .fullname, .file and .unit. Two things differ: there is
one table a unit unless -table says otherwise (benchstat's is .config),
and a key without '/' that the names carry means that name key, so that
runs of two clusters of 8 and 16 ranks compare size by size with
-ignore ranks, or side by side with -col ranks. A key no row has is an
error.

  hccl-test compare base.txt a.txt b.txt            a and b against base
  hccl-test compare -col ranks run8.log run16.log   8 and 16 ranks side by side
  hccl-test compare -filter '/dtype:fp16 /size:(1MiB OR 64MiB)' old.txt new.txt
  hccl-test compare -col /algo -row /size@num sweep.txt

Exit status: 0 no gate failed; 2 bad flags or files; 4 a row got worse by
more than --threshold with significance, or a row of the last file has a
median bus bandwidth below --min-busbw; 5 a row's median got worse by
more than --threshold but it was measured too few times for the U test to
reach --alpha (never a pass: the message says how many runs a side would
decide it).

Flags (benchstat's single dash works too: -filter, -col, -alpha):
%s`

// compareFlags are the long flags of compare that benchstat spells with
// one dash, and that compare takes so.
var compareFlags = []string{"filter", "table", "row", "col", "ignore", "alpha", "threshold", "min-busbw", "help"}

// benchstatArgs rewrites benchstat's "-filter X" and "-col=X" as pflag's
// "--filter X" and "--col=X", up to a "--"; a flag's value is left as it
// is, whatever it starts with.
func benchstatArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || !slices.Contains(compareFlags, name) {
			continue
		}
		if !strings.HasPrefix(a, "--") {
			out[i] = "-" + a
		}
		if !hasValue && name != "help" {
			i++ // the value
		}
	}
	return out
}

// runCompare is `hccl-test compare FILE...`: it groups the measurements
// of files written with --bench (or --csv), or other tools' logs, into
// tables, rows and columns as benchstat does, and compares each column
// with the first; then it applies the gates.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	threshold := fs.String("threshold", "", "exit with status 4 when a row got worse by more than this, with significance (5% or 0.05); 5 when too few runs to decide")
	minBusBW := fs.String("min-busbw", "", "exit with status 4 when a row of the last file has a median bus bandwidth below this many GB/s (as NCCL_TESTS_MIN_BW)")
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
	var g results.Grouping
	fs.StringVar(&g.Filter, "filter", "*", "use only the measurements that match this benchstat filter, such as '/dtype:fp16 .unit:busbw-GB/s'")
	fs.StringVar(&g.Table, "table", "", "split tables by these keys, besides the unit (benchstat's default is .config)")
	fs.StringVar(&g.Row, "row", ".fullname", "split rows by these keys")
	fs.StringVar(&g.Col, "col", ".file", "split columns by these keys, and compare each with the first")
	fs.StringVar(&g.Ignore, "ignore", "", "ignore variations in these keys, such as ranks or host")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := benchstatOnly(args); err != nil {
		return usageError(stderr, "compare", err)
	}
	if err := fs.Parse(benchstatArgs(args)); err != nil {
		return usageError(stderr, "compare", err)
	}
	if *help {
		writeCommandHelp(stdout, "compare", compareHelp, fs, "")
		return exitOK
	}
	byFile := strings.TrimSpace(g.Col) == ".file"
	switch {
	case fs.NArg() == 0 || fs.NArg() == 1 && byFile:
		return usageError(stderr, "compare", errors.New("want two files or more, OLD NEW..., or one with -col KEY to compare within it"))
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
	if err := g.Check(); err != nil { // before any file is read
		return usageError(stderr, "compare", err)
	}
	files := make([]*results.Samples, fs.NArg())
	for i, arg := range fs.Args() {
		label, path := fileLabel(arg)
		var err error
		if files[i], err = results.ReadSamples(path); err != nil {
			return usageError(stderr, "compare", err)
		}
		files[i].Path = label // the column's label and .file, as benchstat's
	}
	res, err := results.CompareFiles(files, g, opt)
	if err != nil {
		return usageError(stderr, "compare", err)
	}
	cs := res.Comparisons
	if len(cs) == 0 { // a gate that compared nothing has not passed
		return usageError(stderr, "compare", nothingCompared(files, res, g))
	}
	cur := res.Files[len(res.Files)-1]
	if minBW > 0 {
		if _, rows := results.BusBWBelow(cur, minBW); rows == 0 { // a gate that checked nothing
			return usageError(stderr, "compare", fmt.Errorf("--min-busbw %s: %s has no bus bandwidth to check", *minBusBW, cur.Path))
		}
	}
	err = res.WriteTables(stdout)
	if err == nil {
		err = res.WriteNotes(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s compare: %s\n", programName, oneLine(err))
		return exitFailed
	}
	return gate(stderr, cs, res.Files[0], cur, opt, *threshold, *minBusBW, minBW, !byFile || len(files) > 2)
}

// nothingCompared says why CompareFiles compared nothing: the filter kept
// no measurement, all fell in one column, or no row is in two columns.
func nothingCompared(files []*results.Samples, res *results.Compared, g results.Grouping) error {
	kept := 0
	for _, f := range res.Files {
		kept += f.Rows()
	}
	switch {
	case kept == 0:
		return fmt.Errorf("-filter %q kept no measurement of the %d files, so nothing was compared", g.Filter, len(files))
	case res.Columns < 2:
		return fmt.Errorf("every measurement falls in one column of -col %q, so nothing was compared: name a key whose values differ, or more files", g.Col)
	case len(files) == 2 && g.Table == "" && g.Ignore == "" && strings.TrimSpace(g.Row) == ".fullname" && strings.TrimSpace(g.Col) == ".file":
		return noCommonRows(res.Files[0], res.Files[1])
	}
	return fmt.Errorf("no row is measured both in the first column of its table and in another, so nothing was compared (-table %q, -row %q, -col %q): -ignore the keys in which the rows differ", g.Table, g.Row, g.Col)
}

// noCommonRows says why Compare paired no row of old with one of cur:
// no row name in common, with the first of each file, or no unit. When
// the rows differ only in name keys, it says which, and how to compare
// them anyway.
func noCommonRows(old, cur *results.Samples) error {
	onlyOld, onlyNew := results.Unpaired(old, cur)
	if len(onlyOld) == 0 || len(onlyNew) == 0 {
		return fmt.Errorf("%s and %s name the same rows but measure them in no common unit, so nothing was compared", old.Path, cur.Path)
	}
	rows := func(names []string) string {
		return fmt.Sprintf("%d row%s such as %s", len(names), map[bool]string{true: "s"}[len(names) > 1], names[0])
	}
	hint := ""
	if keys := results.NameKeysApart(onlyOld, onlyNew); len(keys) > 0 {
		bare := strings.TrimPrefix(keys[0], "/")
		hint = fmt.Sprintf("; they differ in %s: -ignore %s compares them by the rest, -col %s side by side",
			strings.Join(keys, ", "), bare, bare)
	}
	return fmt.Errorf("%s and %s have no row in common, so nothing was compared (%s: %s; %s: %s)%s",
		old.Path, cur.Path, old.Path, rows(onlyOld), cur.Path, rows(onlyNew), hint)
}

// fileLabel splits benchstat's "label=path" into the label a file's
// column goes by and its path. An argument that names a file as it is
// ("size=1MiB.txt"), or has nothing before or after the '=', is a path,
// its own label.
func fileLabel(arg string) (label, path string) {
	label, path, ok := strings.Cut(arg, "=")
	if !ok || label == "" || path == "" {
		return arg, arg
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, arg
	}
	return label, path
}

// benchstatOnly refuses, saying why, benchstat's flags that compare does
// not take, which pflag would read as a cluster of one-letter flags
// ("unknown shorthand flag: 'f' in -format").
func benchstatOnly(args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "format":
			return fmt.Errorf("%s: benchstat's -format is not taken: compare writes text; convert or --csv give CSV of the rows", a)
		case "confidence":
			return fmt.Errorf("%s: benchstat's -confidence is not taken: the intervals are at %g, as benchstat's default", a, results.CompareConfidence)
		}
	}
	return nil
}
