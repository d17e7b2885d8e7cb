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
	name: "convert", args: "[--csv F] [--op OP] [--ranks N] [flags] LOG...", summary: "nccl-tests, hccl_test, ... logs as CSV",
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

A log that does not name its collective (a table from '# nThread' on,
hccl_test's table) takes the one its file's name names (all_reduce_perf.log,
nccl_allreduce_8g.txt, alltoall.out), or --op's; without either it is
refused. Rows without a bus bandwidth (hccl_test's) get ours, algbw times
the collective's bus factor, where the collective and the ranks (the log's,
its mpirun line's, or --ranks) are known. The ranks' hosts (nccl-tests'
"#  Rank  3 ... on HOST device" lines) become the run's topology, which
--bench writes in place of this machine's goos and goarch.

Exit status: 0 converted; 1 an output could not be written; 2 bad flags,
a log without a single row, or a log whose collective is not known;
130, 143 or 129 interrupted by SIGINT, SIGTERM or SIGHUP (one line says which).`

// runConvert is `hccl-test convert LOG...`.
func runConvert(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	fs := pflag.NewFlagSet("convert", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	csvPath := fs.String("csv", "", "write CSV to this file (- for stdout, the default when no output is named)")
	jsonPath := fs.String("json", "", "write JSON lines to this file (- for stdout)")
	benchPath := fs.String("bench", "", "write Go benchmark format to this file (- for stdout)")
	op := fs.String("op", "", "the collective of the logs that do not name theirs (a plain table from '# nThread' on, hccl_test's table): allreduce, ...; without it, the file's name says it (all_reduce_perf.log, nccl_allreduce_8g.txt)")
	var ranks int
	fs.Var(newCount(&ranks, 0), "ranks", "the ranks of the logs that do not say how many (hccl_test's without its mpirun line): with the collective, it gives their rows a bus bandwidth")
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
	_, writing := set.watchOffline(programName + " convert")
	opt, err := convertOptions(fs, *op, ranks)
	if err != nil {
		return usageError(stderr, "convert", err)
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
		rs, err := results.ReadLog(path, opt)
		if err != nil {
			return usageError(stderr, "convert", err)
		}
		runs = append(runs, rs...)
	}
	var sinks []results.Sink
	var writers []io.Writer
	writing()
	for _, out := range used {
		w, err := openOutput(out, set)
		if err != nil {
			return usageError(stderr, "convert", err)
		}
		sinks, writers = append(sinks, out.make(w)), append(writers, w)
	}
	// Each output gets every row until it fails itself: one that fails
	// (a full disk, a closed pipe) is set aside, and the others still get
	// the rest.
	var failures outputFailures
	failed := make([]bool, len(sinks))
	each := func(call func(results.Sink) error) {
		for i, k := range sinks {
			if !failed[i] {
				if err := call(k); err != nil {
					failed[i] = true
					failures.add(err)
				}
			}
		}
	}
	var sum results.Summary
rows:
	for _, run := range runs {
		each(func(k results.Sink) error { return k.Begin(run.Header) })
		for _, r := range run.Records {
			if set.signalled() { // the rows written are ended as a whole file
				break rows
			}
			each(func(k results.Sink) error { return k.Write(r) })
			sum.Add(r)
		}
	}
	each(func(k results.Sink) error { return k.End(sum) })
	failures.drain(writers...)
	code := failures.report(stderr, "convert", exitOK)
	if code == exitOK && set.signalled() {
		return exitStopped // finish says which signal
	}
	return code
}

// convertOptions checks convert's --op and --ranks.
func convertOptions(fs *pflag.FlagSet, op string, ranks int) (results.LogOptions, error) {
	var opt results.LogOptions
	if fs.Changed("op") {
		o, err := parseOp(op)
		if err != nil {
			return opt, fmt.Errorf("--op: %w", err)
		}
		opt.Op = o.String()
	}
	if fs.Changed("ranks") {
		if ranks < 1 || ranks > maxLogRanks {
			return opt, fmt.Errorf("--ranks %d: want the ranks of the run, 1 to %d", ranks, maxLogRanks)
		}
		opt.Ranks = ranks
	}
	return opt, nil
}

// maxLogRanks is the most ranks convert's --ranks takes: as many as a log's
// reader believes a log that says its ranks.
const maxLogRanks = 1<<24 - 1
