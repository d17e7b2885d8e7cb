package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/internal/outfile"
	"github.com/hccl-test/hccl-test/results"
)

// convertCommand is `hccl-test convert`.
var convertCommand = command{
	name: "convert", args: "[--csv F] [--json F] [--bench F] LOG...", summary: "nccl-tests, hccl_test, ... logs as CSV",
	run: runConvert,
}

// convertHelp is convert's --help text before the flags.
const convertHelp = `Reads the logs of other collective benchmarks as they were saved or
pasted: the text output of nccl-tests (every generation of its table),
rccl-tests (its tables, JSON and CSV), hccl_test and nccom-test, and
nccl-tests' -J JSON report; and writes their rows as hccl-test's records,
CSV on stdout unless a flag names another output. Each test of a log is a
run (run_id FILE#N); a column the log does not give is empty, and the
source column names the tool. Lines that are not data (launcher prefixes
aside, which are removed) are skipped. compare and plot read such logs
directly; see docs/results.md.

Exit status: 0 converted; 1 an output could not be written; 2 bad flags,
or a log without a single row.`

// runConvert is `hccl-test convert LOG...`.
func runConvert(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	fs := pflag.NewFlagSet("convert", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	csvPath := fs.String("csv", "", "write CSV to this file (- for stdout, the default when no output is named)")
	jsonPath := fs.String("json", "", "write JSON lines to this file (- for stdout)")
	benchPath := fs.String("bench", "", "write Go benchmark format to this file (- for stdout)")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "convert", err)
	}
	if *help {
		writeCommandHelp(stdout, "convert", convertHelp, fs, "")
		return exitOK
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "convert", errors.New("want at least one log to convert"))
	}
	if *csvPath == "" && *jsonPath == "" && *benchPath == "" {
		*csvPath = "-"
	}
	outs := []output{
		{name: "--csv " + quotePath(*csvPath), path: *csvPath, make: func(w io.Writer) results.Sink { return results.NewCSV(w) }},
		{name: "--json " + quotePath(*jsonPath), path: *jsonPath, make: func(w io.Writer) results.Sink { return results.NewJSONLines(w) }},
		{name: "--bench " + quotePath(*benchPath), path: *benchPath, make: func(w io.Writer) results.Sink { return results.NewBenchFmt(w) }},
	}
	used, err := distinctOutputs(outs, set)
	if err != nil {
		return usageError(stderr, "convert", err)
	}
	// Every log is read, and no output replaces one, before any output
	// is created: a refused run leaves no file behind.
	var runs []results.LogRun
	for _, path := range fs.Args() {
		id, err := outfile.Identify(path)
		if err != nil {
			return usageError(stderr, "convert", fmt.Errorf("%s: %w", path, err))
		}
		for _, out := range used {
			if out.path != "-" && out.id.Same(id) {
				return usageError(stderr, "convert", fmt.Errorf("%s is the log %s: the output would replace it", out.name, path))
			}
		}
		rs, err := results.ReadLog(path)
		if err != nil {
			return usageError(stderr, "convert", err)
		}
		runs = append(runs, rs...)
	}
	var sinks []results.Sink
	for _, out := range used {
		w, err := openOutput(out, set)
		if err != nil {
			return usageError(stderr, "convert", err)
		}
		sinks = append(sinks, out.make(w))
	}
	sink := results.Multi(sinks...)
	var sum results.Summary
	for _, run := range runs {
		if err = sink.Begin(run.Header); err != nil {
			break
		}
		for _, r := range run.Records {
			if err = sink.Write(r); err != nil {
				break
			}
			sum.Add(r)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = sink.End(sum)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s convert: %s\n", programName, oneLine(err))
		return exitFailed
	}
	return exitOK
}
