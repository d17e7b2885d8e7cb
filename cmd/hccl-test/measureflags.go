package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/hccl-test/hccl-test/bench"
)

// measureFlags are the flags of how a row is measured (bench.Method), as
// nccl-tests spells them: -a, -m, -z, -C, -u; -c N is parse.go's.
type measureFlags struct {
	average, aggIters, blocking, cpuTime, unalign int
}

// addMeasureFlags defines the flags of bench.Method on fs.
func addMeasureFlags(fs *pflag.FlagSet) *measureFlags {
	f := &measureFlags{}
	fs.VarP(newCount(&f.average, bench.AverageMax.Flag()), "average", "a",
		"how the ranks' times of one iteration combine into the row's: 0 rank 0, 1 mean, 2 min (the fastest), 3 max (the slowest; nccl-tests' default is 1); the header and the CSV's average column say which")
	arg(fs, "average", "0-3")
	fs.VarP(newCount(&f.aggIters, 1), "agg-iters", "m",
		fmt.Sprintf("ops issued back to back in each timed iteration, its time divided by their count, as nccl-tests' -m (1 to %d; warm-up, checked runs and --overlap's iterations issue one)", bench.MaxAggIters))
	arg(fs, "agg-iters", "N")
	fs.VarP(newCount(&f.blocking, 0), "blocking", "z",
		"what synchronises the timed ops, by nccl-tests' numbers: 0 nothing, back to back; 1 a barrier of every rank after each op, timed with it; 2 each op waited for, which is 0 here (a rank runs one op at a time and an op returns when its part is done: there is no GPU stream to queue on); 3 a barrier before each iteration, outside its time")
	arg(fs, "blocking", "0-3")
	fs.VarP(newCount(&f.cpuTime, 0), "report-cputime", "C",
		"1: add a cputime column: the process's CPU time (user+system, getrusage) over the timed iterations per op and per rank it hosts, combined over the ranks as --average says; time stays the wall clock's (nccl-tests' -C replaces it with the GPU launch time). Not on --backend sim")
	arg(fs, "report-cputime", "0|1")
	fs.VarP(newCount(&f.unalign, 0), "unalign", "u",
		fmt.Sprintf("start every buffer this many elements past its aligned base, as nccl-tests' -u (0 to %d), counted in the memory estimate; results are still checked", bench.MaxUnalign))
	arg(fs, "unalign", "N")
	return f
}

// apply sets m from the flags; what needs the whole plan is left to
// Plan.Validate.
func (f *measureFlags) apply(m *bench.Method) error {
	avg, err := bench.ParseAverage(f.average)
	if err != nil {
		return fmt.Errorf("--average %w", err)
	}
	if f.aggIters < 1 || f.aggIters > bench.MaxAggIters {
		return fmt.Errorf("--agg_iters %d: want 1 to %d ops per iteration", f.aggIters, bench.MaxAggIters)
	}
	if f.cpuTime != 0 && f.cpuTime != 1 {
		return fmt.Errorf("--report_cputime %d: want 1 (report CPU time) or 0 (don't)", f.cpuTime)
	}
	m.Average, m.AggIters, m.Blocking = avg, f.aggIters, bench.Blocking(f.blocking)
	m.CPUTime, m.Unalign = f.cpuTime == 1, f.unalign
	return nil
}
