package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/results"
)

// outputs opens what the run writes: the table on stdout (the median of the
// runs when the sweep repeats) unless a file format takes stdout, and the
// files asked for. It fails, before anything runs, if a file cannot be
// created. The returned function closes the files.
func outputs(o options, p bench.Plan, stdout io.Writer) (results.Sink, func() error, error) {
	var sinks []results.Sink
	var files []*os.File
	closeAll := func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Close())
		}
		return errors.Join(errs...)
	}
	if !p.WritesOutput() {
		// Another process holds rank 0 and writes everything.
		return results.NewTable(io.Discard), closeAll, nil
	}
	tableOnStdout := true
	for _, out := range []struct {
		flag, path string
		make       func(io.Writer) results.Sink
	}{
		{"--csv", o.csv, func(w io.Writer) results.Sink { return results.NewCSV(w) }},
		{"--json", o.json, func(w io.Writer) results.Sink { return results.NewJSONLines(w) }},
		{"--bench", o.bench, func(w io.Writer) results.Sink { return results.NewBenchFmt(w) }},
	} {
		switch out.path {
		case "":
		case "-":
			tableOnStdout = false
			sinks = append(sinks, out.make(stdout))
		default:
			f, err := os.Create(out.path)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("%s %q: %w", out.flag, out.path, err)
			}
			files = append(files, f)
			sinks = append(sinks, out.make(f))
		}
	}
	if tableOnStdout {
		var table results.Sink = results.NewTable(stdout)
		if p.Runs > 1 {
			table = results.NewMedian(table, p.Runs)
		}
		sinks = append([]results.Sink{table}, sinks...)
	}
	return results.Multi(sinks...), closeAll, nil
}
