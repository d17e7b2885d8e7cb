package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/outfile"
	"github.com/hccl-test/hccl-test/predict"
)

// fitCommand is `hccl-test fit`.
var fitCommand = command{
	name: "fit", args: "[flags] -o MODEL.json LOG...",
	summary: "fit a cluster's model to the logs of its runs",
	run:     runFit,
}

// fitHelp is fit's --help text before the flags.
const fitHelp = `Fits a model of one cluster to the logs of its runs: nccl-tests,
rccl-tests, hccl_test or nccom-test output (anything convert reads), or
hccl-test's own CSV (--csv) or Go benchmark lines (--bench). Each log's
servers and ranks per server come from its rank lines ("Rank 0 ... on
HOST"), from hccl-test's topology column, or from --topology for a log
without them (FILE= names the log; without it the topology is every such
log's). The model is auto's cost model with the cluster's figures: per
level (inside a server, between servers) latency and bandwidth, whose
the link between servers is (a rank's, or one a server that its ranks
share: told where the runs of several servers have two widths, as 2 x 1
and 2 x 2), the reduction rate, and per collective the scales its curve
shows (inside a server and, where it ran on one server and on several,
between servers apart), the algorithm of ours its curve fits, and
whether it passes what the links allow (a reduction in the network). It
prints every figure, the rows it came from, the other optima of like
error that the rows cannot tell from the model's (predict's band covers
them) and the residual of every fitted row, and writes the model as JSON
for predict. See docs/predict.md.

Exit status: 0 fitted; 1 the model could not be written; 2 bad flags or
logs (a log of two clusters, a topology its rank lines contradict, ...);
130, 143 or 129 interrupted by SIGINT, SIGTERM or SIGHUP (one line says which).`

// runFit is `hccl-test fit LOG... -o MODEL.json`.
func runFit(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	fs := pflag.NewFlagSet("fit", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	out := fs.StringP("output", "o", "", "write the model to this file (JSON; required)")
	topos := fs.StringArray("topology", nil, "[FILE=]servers=S,per-server=G: the topology of FILE (or of every log without rank lines); repeatable")
	cores := fs.Int("cores", runtime.NumCPU(), "at most this many CPUs were shared by the ranks of hccl-test's own CPU backends (shm, proc, tcp) in the fitted runs: fit takes the count that fits best, a power of two below it or it")
	minSize := fs.String("min-size", "1", "fit only the rows of this size or more (4K, 1M): leave out rows that ran from a CPU's cache")
	stat := fs.String("stat", "mean", "the time of a row to fit: "+strings.Join(predict.Stats, ", ")+" (p50 and min: hccl-test's CSV only)")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "fit", err)
	}
	if *help {
		writeCommandHelp(stdout, "fit", fitHelp, fs, "")
		return exitOK
	}
	switch {
	case fs.NArg() == 0:
		return usageError(stderr, "fit", errors.New("want at least one log to fit"))
	case *out == "":
		return usageError(stderr, "fit", errors.New("want -o MODEL.json: the file to write the model to"))
	case *cores < 1 || *cores > 1<<20:
		return usageError(stderr, "fit", fmt.Errorf("--cores %d: want 1 to %d", *cores, 1<<20))
	}
	_, writing := set.watchOffline(programName + " fit")
	minBytes, err := limits.Size(*minSize)
	if err != nil {
		return usageError(stderr, "fit", fmt.Errorf("--min-size: %w", err))
	}
	topo, err := fitTopologies(*topos, fs.Args())
	if err != nil {
		return usageError(stderr, "fit", err)
	}
	outs, err := distinctOutputs([]output{{name: "-o " + quotePath(*out), path: *out}}, set)
	if err != nil {
		return usageError(stderr, "fit", err)
	}
	var files []*predict.File
	for _, path := range fs.Args() {
		if id, err := outfile.Identify(path); err == nil && len(outs) > 0 && outs[0].path != "-" && outs[0].id.Same(id) {
			return usageError(stderr, "fit", fmt.Errorf("-o %s is the log %s: the model would replace it", quotePath(*out), path))
		}
		f, err := predict.ReadFile(path, topo[path], *stat)
		if err != nil {
			return usageError(stderr, "fit", err)
		}
		files = append(files, f)
	}
	fit, err := predict.FitFiles(files, predict.Options{Cores: *cores, MinBytes: minBytes})
	if err != nil {
		return usageError(stderr, "fit", err)
	}
	writing()
	w, err := openOutput(outs[0], set)
	if err != nil {
		return usageError(stderr, "fit", err)
	}
	// The report is printed even when the model could not be written:
	// its figures are the model's. The failures are said in one line.
	var failures outputFailures
	failures.add(fit.Model.Encode(w))
	if outs[0].path != "-" { // when the model is stdout, the report would spoil it
		failures.add(fit.WriteReport(stdout))
		failures.drain(w, stdout)
	} else {
		failures.drain(w)
	}
	return failures.report(stderr, "fit", exitOK)
}

// fitTopologies maps each log to its --topology: "FILE=SPEC" for FILE,
// a bare SPEC for every log. A FILE that is not among logs, or one given
// twice, is refused.
func fitTopologies(specs, logs []string) (map[string]string, error) {
	out := map[string]string{}
	all := ""
	for _, s := range specs {
		i := max(strings.LastIndex(s, "=servers="), strings.LastIndex(s, "=per-server="))
		if i < 0 {
			if all != "" {
				return nil, fmt.Errorf("--topology %q: a topology for every log was given already (%q)", s, all)
			}
			all = s
			continue
		}
		file, spec := s[:i], s[i+1:]
		if !slices.Contains(logs, file) {
			return nil, fmt.Errorf("--topology %q: %s is none of the logs to fit", s, file)
		}
		if _, twice := out[file]; twice {
			return nil, fmt.Errorf("--topology %q: %s has a topology already", s, file)
		}
		out[file] = spec
	}
	for _, l := range logs {
		if _, ok := out[l]; !ok {
			out[l] = all
		}
	}
	return out, nil
}
