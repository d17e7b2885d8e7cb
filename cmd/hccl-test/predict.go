package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/clustermodel"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/internal/listarg"
	"github.com/hccl-test/hccl-test/internal/outfile"
	"github.com/hccl-test/hccl-test/predict"
	"github.com/hccl-test/hccl-test/world"
)

// predictCommand is `hccl-test predict`.
var predictCommand = command{
	name: "predict", args: "--model MODEL.json --topology SPEC [flags]",
	summary: "predict a larger world with it, with a band",
	run:     runPredict,
}

// predictHelp is predict's --help text before the flags.
const predictHelp = `Predicts, with a model that fit made of a cluster's logs, what each
collective of --op takes at each size on a world of S servers of G ranks:
time, algbw and busbw as a sweep reports them, each with a band (low,
high) that holds the fit's own error and widens with every doubling of
ranks or servers beyond the fitted worlds. Predictions run on auto's cost
model with the cluster's figures: every algorithm of ours is costed and
the fastest is named on its row (--algo NAME costs that one instead).
Nothing is measured.

--export simai writes SimAI's analytical busbw table (busbw.yaml: TP a
server's ranks, DP one rank per server, EP the world, PP a sendrecv
between servers) at the largest size; --export nccl-tuner writes the NCCL
tuner plugin example's CSV rules for the sizes swept. See docs/predict.md.

Exit status: 0 predicted; 1 an output could not be written; 2 bad flags,
or a model file of another version or that makes no sense;
130, 143 or 129 interrupted by SIGINT, SIGTERM or SIGHUP (one line says which).`

// runPredict is `hccl-test predict --model MODEL.json --topology ...`.
func runPredict(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	fs := pflag.NewFlagSet("predict", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(normalize)
	modelPath := fs.String("model", "", "the model fit wrote (required)")
	topo := fs.String("topology", "", "servers=S,per-server=G: the world to predict (required)")
	ops := fs.String("op", "allreduce", "collectives, comma-separated, or all (those the model has)")
	minB := fs.StringP("minbytes", "b", "32M", "smallest size (8, 4K, 1.5M, 1G)")
	maxB := fs.StringP("maxbytes", "e", "1G", "largest size, as --minbytes; always included")
	factor := fs.IntP("stepfactor", "f", 2, "multiply the size by this each step (2 or more)")
	algo := fs.String("algo", coll.Auto, "the algorithm to predict; auto: the fastest of ours at each size")
	csvPath := fs.String("csv", "", "also write the rows as CSV to this file (- for stdout, instead of the table)")
	export := fs.String("export", "", "write "+strings.Join(predict.Exports, " or ")+" to -o instead of the table")
	out := fs.StringP("output", "o", "", "the file --export writes (- for stdout)")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "predict", err)
	}
	if *help {
		writeCommandHelp(stdout, "predict", predictHelp, fs, "")
		return exitOK
	}
	fail := func(err error) int { return usageError(stderr, "predict", err) }
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q: predict reads no logs (fit them into --model)", fs.Arg(0)))
	case *modelPath == "":
		return fail(errors.New("want --model MODEL.json, written by hccl-test fit"))
	case *topo == "":
		return fail(errors.New("want --topology servers=S,per-server=G: the world to predict"))
	case *export != "" && !slices.Contains(predict.Exports, *export):
		return fail(fmt.Errorf("--export %q: want %s", *export, strings.Join(predict.Exports, " or ")))
	case *export != "" && *out == "":
		return fail(fmt.Errorf("--export %s: want -o FILE to write it to", *export))
	case *export == "" && *out != "":
		return fail(errors.New("-o: only --export writes to -o (the rows go to --csv)"))
	}
	_, writing := set.watchOffline(programName + " predict")
	world, err := predictWorld(*topo)
	if err != nil {
		return fail(err)
	}
	lo, err := limits.Size(*minB)
	if err != nil {
		return fail(fmt.Errorf("-b: %w", err))
	}
	hi, err := limits.Size(*maxB)
	if err != nil {
		return fail(fmt.Errorf("-e: %w", err))
	}
	sizes, err := predict.Sizes(lo, hi, *factor)
	if err != nil {
		return fail(err)
	}
	m, err := clustermodel.Load(*modelPath)
	if err != nil {
		return fail(err)
	}
	opList, err := predictOps(*ops, m)
	if err != nil {
		return fail(err)
	}
	rows, err := predict.Predict(m, predict.Query{World: world, Ops: opList, Sizes: sizes, Algo: *algo})
	if err != nil {
		return fail(err)
	}
	outs, err := distinctOutputs([]output{
		{name: "--csv " + quotePath(*csvPath), path: *csvPath},
		{name: "-o " + quotePath(*out), path: *out},
	}, set)
	if err != nil {
		return fail(err)
	}
	if id, err := outfile.Identify(*modelPath); err == nil {
		for _, o := range outs {
			if o.path != "-" && o.id.Same(id) {
				return fail(fmt.Errorf("%s is the model %s: writing it would replace the model", o.name, *modelPath))
			}
		}
	}
	// Every output is written, one failing not keeping the others (nor
	// the table) from theirs; the failures are said in one line.
	var failures outputFailures
	var writers []io.Writer
	toStdout := false
	writing()
	for _, o := range outs {
		w, err := openOutput(o, set)
		if err != nil {
			return fail(err)
		}
		writers = append(writers, w)
		toStdout = toStdout || o.path == "-"
		switch {
		case o.path == *csvPath:
			err = predict.WriteCSV(w, rows)
		case *export == "simai":
			err = predict.WriteSimAI(w, m, world, sizes[len(sizes)-1])
		default:
			err = predict.WriteNCCLTuner(w, m, rows)
		}
		failures.add(err)
	}
	if !toStdout {
		failures.add(predict.WriteTable(stdout, *modelPath, m, rows))
		writers = append(writers, stdout)
	}
	failures.drain(writers...)
	return failures.report(stderr, "predict", exitOK)
}

// predictWorld reads --topology servers=S,per-server=G (both keys).
func predictWorld(s string) (clustermodel.World, error) {
	keys, vals, err := listarg.Keys("--topology", s, ",", "=", strings.ToLower)
	if err != nil {
		return clustermodel.World{}, err
	}
	n := 1
	for i, k := range keys {
		v, err := limits.Count(vals[i])
		if err != nil || v < 1 || v > clustermodel.MaxRanks {
			return clustermodel.World{}, fmt.Errorf("--topology %q: %s=%s: want 1 to %d", s, k, vals[i], clustermodel.MaxRanks)
		}
		if k != "servers" && k != "per-server" {
			return clustermodel.World{}, fmt.Errorf("--topology %q: unknown key %q (want servers and per-server)", s, k)
		}
		n *= v
	}
	if len(keys) != 2 {
		return clustermodel.World{}, fmt.Errorf("--topology %q: give both servers=S and per-server=G", s)
	}
	if n > clustermodel.MaxRanks {
		return clustermodel.World{}, fmt.Errorf("--topology %q: %d ranks, beyond the limit of %d", s, n, clustermodel.MaxRanks)
	}
	t, err := world.ParseTopology(s, n)
	if err != nil {
		return clustermodel.World{}, err
	}
	if t.Servers < 1 {
		return clustermodel.World{}, fmt.Errorf("--topology %q: no servers", s)
	}
	if t.Servers*t.PerServer < 2 {
		return clustermodel.World{}, fmt.Errorf("--topology %q: one rank: nothing moves between ranks", s)
	}
	return clustermodel.World{Servers: t.Servers, PerServer: t.PerServer}, nil
}

// predictOps reads --op: a list of collectives, or all, the model's.
func predictOps(s string, m *clustermodel.Model) ([]coll.Op, error) {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		var out []coll.Op
		for _, o := range m.Ops {
			op, _ := coll.ParseOp(o.Name)
			out = append(out, op)
		}
		return out, nil
	}
	return listarg.Parse("--op", s, ",", coll.ParseOp)
}
