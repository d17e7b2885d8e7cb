package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/isolate"
	"github.com/hccl-test/hccl-test/results/plot"
)

// exitNamed is isolate's status when it names a host or a pair: the
// status of a run below NCCL_TESTS_MIN_BW (exitWrong), as both say the
// cluster is not as it should be.
const exitNamed = exitWrong

// isolateCommand is `hccl-test isolate`.
var isolateCommand = command{
	name: "isolate", args: "[--csv F] [-o IMG] [DIR]", summary: "find the bad host: live across hosts, or in pairwise logs",
	run: runIsolate,
}

// isolateHelp is isolate's --help text before the flags.
const isolateHelp = `With DIR, reads a directory of pairwise logs, one or more per pair of hosts
(nccl-tests, rccl-tests, hccl_test, nccom-test, hccl-test's CSV), and names
the host or link that makes the cluster slow. The hosts of a log are those
its rank lines name ("Rank 3 Group 0 Pid 1234 on HOST device"), else its
file name's two parts (nodeA-nodeB.log, pair_nodeA_nodeB.txt).

Without DIR, searches live: launched as a sweep is (-p N on tcp or proc,
mpirun, srun, torchrun), it measures every pair of hosts in rounds of
disjoint pairs (a sendrecv both ways, local rank i of one host against
local rank i of the other, so that every rail is measured), then an
allreduce over the halves, quarters, ... of the hosts, to find groups slow
only together. Measurement k must end by k+1 limits (--timeout) after the
search began; one that fails or hangs is recorded failed with its ranks,
its links are dropped, and the search goes on.

Each pair's figure is its busbw (algbw where a log gives none) at the
largest size at least half the logs measured (live: --size, the slowest
rail). A pair is failed when a log says so (a failure line, wrong
elements) or misses such a size; slow when below both the median of the
hosts' medians minus --k median absolute deviations and --floor x that
median. A host is named when bad with most of its peers (3 hosts or
more), one at a time, strongest evidence first, each host's pairs with
the hosts named before it set aside (exactly half, all failed, names a
host whose peers are bad with fewer); a bad pair between good hosts is named in its own right; a group
slow or failed with no named host and no bad pair in it is named. See
docs/isolate.md.

Exit status: 0 nothing named; 3 a host, pair or group named; 1 an output
could not be written, or the live search could not run; 2 bad flags, or a
directory that is not one of logs; 130, 143 or 129 a search or a reading
interrupted by SIGINT, SIGTERM or SIGHUP (one line says which).`

// runIsolate is `hccl-test isolate DIR`, or with no DIR the live search
// (isolatelive.go).
func runIsolate(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	fs := pflag.NewFlagSet("isolate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	fs.SortFlags = false
	def := isolate.DefaultConfig()
	csvPath := fs.String("csv", "", "write a CSV row per pair to this file")
	image := fs.StringP("output", "o", "", "draw the host-by-host heatmap into this image: .png or .svg")
	op := fs.String("op", "", "logs: the op to compare when the logs measure several (sendrecv, ...)")
	k := fs.Float64("k", def.K, "median absolute deviations, of the logarithms of the hosts' figures, below the median that make a pair slow")
	floor := fs.Float64("floor", def.Floor, "share of the median below which a pair may be slow")
	live, err := addLiveFlags(fs)
	if err != nil {
		fmt.Fprintf(stderr, "%s isolate: %s\n", programName, oneLine(err))
		return exitUsage
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "isolate", err)
	}
	if *help {
		writeCommandHelp(stdout, "isolate", isolateHelp, fs, "")
		return exitOK
	}
	if fs.NArg() > 1 {
		return usageError(stderr, "isolate", fmt.Errorf("want one argument, the directory of pairwise logs, or none for a live search; got %d", fs.NArg()))
	}
	c := isolate.Config{K: *k, Floor: *floor}
	if err := c.Validate(); err != nil {
		return usageError(stderr, "isolate", fmt.Errorf("--%w", err))
	}
	if *image != "" {
		if err := plot.CheckOutput(*image); err != nil {
			return usageError(stderr, "isolate", fmt.Errorf("--output %w", err))
		}
	}
	if fs.NArg() == 0 {
		if *op != "" {
			return usageError(stderr, "isolate", errors.New("--op: only logs take it; a live search measures sendrecv between pairs and allreduce in groups"))
		}
		return runIsolateLive(fs, args, live, c, *csvPath, *image, set)
	}
	if name := live.given(fs); name != "" {
		return usageError(stderr, "isolate", fmt.Errorf("--%s: only a live search (no DIR) takes it", name))
	}
	dir := fs.Arg(0)
	for _, out := range []struct{ flag, path string }{{"--csv", *csvPath}, {"--output", *image}} {
		if out.path != "" && inDir(out.path, dir) {
			return usageError(stderr, "isolate", fmt.Errorf("%s %s is in %s: the next isolate would read it as a log; write it elsewhere", out.flag, quotePath(out.path), quotePath(dir)))
		}
	}
	_, writing := set.watchOffline(programName + " isolate")
	logs, opName, err := isolate.ReadDir(dir, *op)
	if err != nil {
		return usageError(stderr, "isolate", err)
	}
	csvOut, err := isolateOutputs(*csvPath, *image, set)
	if err != nil {
		return usageError(stderr, "isolate", err)
	}
	r := isolate.Analyze(logs, opName, c)
	named := func() bool { hosts, pairs := r.Named(); return len(hosts)+len(pairs) > 0 }
	writing()
	return writeIsolate(r, r.WriteText, named, csvOut, *image, set)
}

// isolateOutputs checks isolate's outputs before the work: the CSV, the
// image and stdout (the report) must be three files (or a file that
// keeps nothing), as every command's outputs are; and opens the CSV
// ("": none, a nil writer) as one of set's outputs, so that a path that
// cannot be written is refused first, a FIFO is waited for as long as
// an input FIFO, and a file another run writes is refused.
func isolateOutputs(csvPath, image string, set *outputSet) (io.Writer, error) {
	csv := output{name: "--csv " + quotePath(csvPath), path: csvPath}
	used, err := distinctOutputs([]output{
		{name: "stdout (the report)", path: "-"},
		csv,
		{name: "--output " + quotePath(image), path: image},
	}, set)
	if err != nil {
		return nil, err
	}
	for _, o := range used {
		if o.name == csv.name && csvPath != "" {
			return openOutput(o, set)
		}
	}
	return nil, nil
}

// writeIsolate writes the CSV (csvOut, nil for none) and the heatmap of r,
// then its report (text), and returns the status: 3 when named says a
// host, pair or group is named; 1, said in one line, when an output could
// not be written, after the others were.
func writeIsolate(r *isolate.Report, text func(io.Writer) error, named func() bool, csvOut io.Writer, image string, set *outputSet) int {
	var failures outputFailures
	if csvOut != nil {
		failures.add(r.WriteCSV(csvOut))
	}
	if image != "" {
		if err := plot.WriteHeatmap(heatmapOf(r), image); err != nil {
			failures.add(fmt.Errorf("--output %w", err))
		}
	}
	failures.add(text(set.stdout))
	failures.drain(csvOut, set.stdout)
	// A report that did not reach stdout names nothing: the failure is
	// the status (1), not 3.
	if code := failures.report(set.stderr, "isolate", exitOK); code != exitOK {
		return code
	}
	if named() {
		return exitNamed
	}
	return exitOK
}

// inDir reports whether the file path would be in the directory dir.
func inDir(path, dir string) bool {
	pst, err1 := os.Stat(filepath.Dir(path))
	dst, err2 := os.Stat(dir)
	return err1 == nil && err2 == nil && os.SameFile(pst, dst)
}

// heatmapOf lays the report out host by host, in the order of the hosts'
// names.
func heatmapOf(r *isolate.Report) *plot.Heatmap {
	var names []string
	for _, h := range r.Hosts {
		names = append(names, h.Name)
	}
	slices.Sort(names)
	at := map[string]int{}
	for i, n := range names {
		at[n] = i
	}
	n := len(names)
	h := &plot.Heatmap{Labels: names, Floor: r.Config.Floor,
		Title: fmt.Sprintf("%s %s at %d bytes, GB/s (median %.3g)", r.Op, r.Unit, r.Size, r.Median),
		Note:  "cell: the pair's GB/s, coloured by its ratio to the median; FAIL, FLAKY: a log of it failed"}
	h.Value, h.Ratio, h.Mark = make([][]float64, n), make([][]float64, n), make([][]string, n)
	for i := range n {
		h.Value[i], h.Ratio[i], h.Mark[i] = make([]float64, n), make([]float64, n), make([]string, n)
		for j := range n {
			h.Value[i][j], h.Ratio[i][j] = math.NaN(), math.NaN()
		}
	}
	for _, p := range r.Pairs {
		i, j := at[p.A], at[p.B]
		mark := ""
		if p.Verdict == isolate.Failed || p.Verdict == isolate.Flaky {
			mark = strings.ToUpper(map[string]string{isolate.Failed: "fail", isolate.Flaky: "flaky"}[p.Verdict])
		}
		for _, c := range [][2]int{{i, j}, {j, i}} {
			h.Value[c[0]][c[1]], h.Ratio[c[0]][c[1]], h.Mark[c[0]][c[1]] = p.Figure, p.Ratio, mark
		}
	}
	return h
}
