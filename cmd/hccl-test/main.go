// Command hccl-test sweeps collective operations over message sizes, data
// types and reductions on a chosen backend, checks every result, and prints
// latency, algorithm bandwidth, bus bandwidth and link utilization per row.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/bench"
	"github.com/hccl-test/hccl-test/internal/sigquit"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/runctl"

	_ "github.com/hccl-test/hccl-test/backends/mpi"  // registers --backend mpi (a build with -tags mpi) and its variables
	_ "github.com/hccl-test/hccl-test/backends/proc" // registers --backend proc
	_ "github.com/hccl-test/hccl-test/backends/shm"  // registers --backend shm
	_ "github.com/hccl-test/hccl-test/backends/sim"  // registers --backend sim
	_ "github.com/hccl-test/hccl-test/backends/tcp"  // registers --backend tcp
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // the run failed (timeout, transport error, output error)
	exitUsage   = 2 // bad flags or values; nothing was started
	exitWrong   = 3 // the run finished but some results were wrong
	exitSignal  = 130
	programName = "hccl-test"
)

func main() {
	reportOnSIGQUIT(sigquit.C(), os.Stderr)
	pr, err := programOf(os.Args[0]) // all_reduce_perf, all_reduce_test: programs.go
	if err != nil {
		fmt.Fprintln(os.Stderr, oneLine(err))
		os.Exit(exitUsage)
	}
	calledAs = pr
	screenWidth = terminalWidth(os.Stdout)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands is the table of subcommands, in the order hccl-test --help
// lists them: a new command is its file (its entry, run function and
// help) and one line here. Set by init: a command's help reads the table.
var commands []*command

func init() {
	commands = []*command{
		&compareCommand,
		&plotCommand,
		&convertCommand,
		&isolateCommand,
		&scenarioCommand,
		&algorithmsCommand,
		&linksCommand,
		&fitCommand,
		&predictCommand,
		&helpCommand,
	}
}

// calledAs is the program of another tool this binary was called as
// (programs.go), nil when called as hccl-test; main sets it.
var calledAs *program

// run is main without the process: it parses args, runs the sweep and
// returns the exit code. What it writes goes through an outputSet, which
// it ends before returning: a write that failed is an error.
func run(args []string, stdout, stderr io.Writer) int {
	set := newOutputSet(stdout, stderr)
	return set.finish(runWith(args, set))
}

// runWith is run on the outputs of set.
func runWith(args []string, set *outputSet) int {
	stdout, stderr := io.Writer(set.stdout), io.Writer(set.stderr)
	if len(args) > 0 {
		if c := lookupCommand(args[0]); c != nil {
			return c.run(args[1:], set)
		}
	}
	plan, opts, err := parseFlags(args, stdout)
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s (see --help)\n", programName, oneLine(err))
		return exitUsage
	}
	if opts.version {
		fmt.Fprintf(stdout, "%s %s\n", programName, bench.Version)
		return exitOK
	}
	if err := plan.Validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", programName, oneLine(err))
		return exitUsage
	}

	if opts.dryRun {
		if err := plan.DryRun(stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", programName, oneLine(err))
			return exitFailed
		}
		return exitOK
	}
	// A progress bar on a terminal stderr; the table, when it goes to the
	// same terminal, prints above it.
	var progress *Progress
	tableOut := stdout
	if plan.WritesOutput() {
		progress = NewProgress(os.Stderr)
		if progress != nil && IsTerminal(os.Stdout) {
			tableOut = progress.Writer()
		}
	}
	sink, profile, err := outputs(opts, plan, set, tableOut)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", programName, oneLine(err))
		return exitUsage
	}
	if progress != nil {
		progress.SetRows(planRowBytes(plan))
		sink = progress.Wrap(sink)
	}

	sink = set.countRows(sink)
	// Every stop cause (a signal, an output that fails, the memory guard)
	// cancels ctx and is told by set.finish in one line.
	ctx := set.watchSignals(programName)
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			fmt.Fprintf(stderr, "%s: %s: %s\n", programName, envCPUProfile, oneLine(err))
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	plan.Log = stderr // the backend's notes and the output of the ranks it starts
	gctx, stopGuard := guardMemory(ctx, plan.Memory().Total(), set)
	sum, err := bench.Run(gctx, plan, sink)
	stopGuard()
	switch {
	case err != nil && memoryStopped(gctx, set):
		return exitStopped
	case set.stopped() != nil && !plan.WritesOutput():
		// Ranks that write no output (tcp's children) leave the saying to
		// rank 0.
		set.quietStop()
		return exitStopped
	case set.stopped() != nil:
		return exitStopped
	case errors.Is(err, runctl.ErrPlanMismatch), errors.Is(err, backends.ErrDisagree):
		// The command lines disagree: bad input, though found only once
		// the ranks could compare them.
		fmt.Fprintf(stderr, "%s: %s\n", programName, oneLine(err))
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\n", programName, oneLine(err))
		return exitFailed
	case sum.Wrong > 0 && sum.Injected > 0:
		fmt.Fprintf(stderr, "%s: %d wrong elements (%d of them messages corrupted by --inject where the check could not see them, one each): the collective results are not correct\n",
			programName, sum.Wrong, sum.Injected)
		return exitWrong
	case sum.Wrong > 0:
		fmt.Fprintf(stderr, "%s: %d wrong elements: the collective results are not correct\n", programName, sum.Wrong)
		return exitWrong
	case plan.WritesOutput() && results.BelowMin(sum.AllBusBW, plan.MinBusBW):
		fmt.Fprintf(stderr, "%s: average bus bandwidth %.6g GB/s over %s is below %g x NCCL_TESTS_MIN_BW=%g: FAILED, as nccl-tests says\n",
			programName, sum.AllBusBW, results.Count(sum.AllRows, "row"), results.MinBusBWShare, plan.MinBusBW)
		return exitWrong
	}
	return exitOK
}

// reportOnSIGQUIT makes every SIGQUIT that arrives on ch print what every
// rank of this process is doing, to w, while the program goes on (rather
// than Go's default of dumping goroutines and exiting), until the process
// exits. Over tcp each rank process prints its own; the parent passes the
// signal on to the ranks it started.
func reportOnSIGQUIT(ch <-chan os.Signal, w io.Writer) {
	go func() {
		for range ch {
			WriteStatus(w)
		}
	}()
}
