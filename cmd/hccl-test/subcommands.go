package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/results/plot"
)

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
