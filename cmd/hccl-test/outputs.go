package main

import (
	"fmt"
	"io"

	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/outfile"
	"github.com/hccl-test/hccl-test/results"
)

// output is one thing a sweep writes and where.
type output struct {
	name string // how a refusal names it: "--csv x", "the table on stdout"
	path string // "-" is stdout
	make func(io.Writer) results.Sink
	id   outfile.ID
}

// outputs opens what the run writes: the table on tableOut (stdout, or
// above a progress bar on it; the median of the runs when the sweep
// repeats) unless a file format takes stdout, the files asked for, and the
// CPU profile's file if one is asked for (profile is then not nil). It
// refuses, before anything runs, two outputs on one file, whatever their
// spelling, and a file that cannot be created. Every output is one of
// set's, which closes them.
func outputs(o options, p bench.Plan, set *outputSet, tableOut io.Writer) (sink results.Sink, profile io.Writer, err error) {
	if !p.WritesOutput() {
		// Another process holds rank 0 and writes everything.
		sink = results.NewTable(io.Discard)
		if path := o.cpuProfile; path != "" {
			if profile, err = set.create(envCPUProfile, path); err != nil {
				return nil, nil, fmt.Errorf("%s=%s: %w", envCPUProfile, path, err)
			}
		}
		return sink, profile, nil
	}
	outs := []output{
		{name: "--csv " + quotePath(o.csv), path: o.csv, make: func(w io.Writer) results.Sink { return results.NewCSV(w) }},
		{name: "--json " + quotePath(o.json), path: o.json, make: func(w io.Writer) results.Sink { return results.NewJSONLines(w) }},
		{name: "--bench " + quotePath(o.bench), path: o.bench, make: func(w io.Writer) results.Sink { return results.NewBenchFmt(w) }},
		{name: "-J " + quotePath(o.ncclJSON), path: o.ncclJSON, make: func(w io.Writer) results.Sink { return results.NewNCCLJSON(w, ncclJSONRun(p)) }},
		{name: envCPUProfile + "=" + quotePath(o.cpuProfile), path: o.cpuProfile},
	}
	tableOnStdout := o.csv != "-" && o.json != "-" && o.bench != "-" && o.ncclJSON != "-"
	if tableOnStdout {
		outs = append([]output{{name: "the table on stdout", path: "-"}}, outs...)
	}
	used, err := distinctOutputs(outs, set)
	if err != nil {
		return nil, nil, err
	}

	var sinks []results.Sink
	for _, out := range used {
		var w io.Writer
		switch {
		case out.path == "-" && out.make == nil: // the table
			w = set.stdout
			if tableOut != w {
				w = set.add("stdout", tableOut) // above the progress bar
			}
			var table results.Sink = results.NewTable(w)
			if p.Runs > 1 && !p.Cycles {
				table = results.NewMedian(table, p.Runs)
			}
			sinks = append(sinks, table)
			continue
		default:
			if w, err = openOutput(out, set); err != nil {
				return nil, nil, err
			}
		}
		if out.make == nil {
			profile = w
			continue
		}
		sinks = append(sinks, out.make(w))
	}
	return results.Multi(sinks...), profile, nil
}

// distinctOutputs identifies the files of outs that name one (a path not
// "" ) and returns them, refusing two outputs on one file, whatever their
// spelling. stderr counts as an output, unless it is stdout's file (2>&1, a
// terminal), which the outputs are compared with anyway: an output on
// stderr's file would get the program's error lines among its rows.
func distinctOutputs(outs []output, set *outputSet) ([]output, error) {
	var used []output
	if set.stderrID.Exists() && !set.stderrID.Same(set.stdoutID) {
		used = append(used, output{name: "stderr", path: "", id: set.stderrID})
	}
	skip := len(used) // stderr is compared with, not returned
	for _, out := range outs {
		switch out.path {
		case "":
			continue
		case "-":
			out.id = set.stdoutID
		default:
			var err error
			if out.id, err = outfile.Identify(out.path); err != nil {
				return nil, fmt.Errorf("%s: %w", out.name, err)
			}
		}
		for _, u := range used {
			if out.id.Same(u.id) && !out.id.KeepsNothing() {
				return nil, fmt.Errorf("%s and %s are one file: give each output its own", u.name, out.name)
			}
		}
		used = append(used, out)
	}
	return used[skip:], nil
}

// openOutput opens out, one of distinctOutputs', as one of set's outputs:
// stdout, the file behind stderr through stderr's writer when stderr is
// stdout's file too (so that it is neither truncated nor written over), or
// the file created.
func openOutput(out output, set *outputSet) (io.Writer, error) {
	switch {
	case out.path == "-":
		return set.stdout, nil
	case out.id.Same(set.stderrID):
		return set.stderr, nil
	}
	w, err := set.create(out.name, out.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out.name, err)
	}
	return w, nil
}
