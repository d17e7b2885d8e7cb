package bench

import (
	"fmt"
	"strings"

	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/results"
)

// Method is how a row is measured, with nccl-tests' meaning of its flags
// (-a, -m, -z, -C, -c N, -u): how the ranks' times of an iteration make
// the row's, how many ops an iteration issues and what synchronises them,
// whether CPU time is reported too, how many checked runs follow the timed
// ones, and how far the buffers start from their aligned base. The zero
// Method is the tool's default measurement.
type Method struct {
	// Average is which rank's times make the row's (-a, Average.series);
	// the zero value, AverageMax, is the slowest rank's.
	Average Average
	// AggIters > 1 issues that many ops back to back in each timed
	// iteration, whose time is then divided by their count (-m); 0 or 1:
	// one op.
	AggIters int
	// Blocking is nccl-tests' -z: what synchronises the ops of the timed
	// iterations (BlockingNone .. BlockingIterBarrier).
	Blocking Blocking
	// CPUTime also reports each row's process CPU time per op (user and
	// system, from getrusage), beside its wall time (-C).
	CPUTime bool
	// CheckIters, when Sweep.Check is on, is how many checked runs a row
	// makes after its timed ones, each on inputs filled anew (-c N); 0 or
	// 1: one. The checks stop after the first run that found a wrong
	// element, whose count the row reports.
	CheckIters int
	// Unalign starts every buffer this many elements of the row's data
	// type past its aligned base (-u), the memory estimate counting them.
	Unalign int
}

// Average is which of the ranks' times make a row's (Method.Average):
// one rank's series, or each iteration's mean over the ranks.
type Average int

// The combinations of -a. nccl-tests numbers them 0 rank 0, 1 mean, 2
// min, 3 max (AverageFlag); the zero value here is the tool's default.
const (
	// AverageMax: the slowest rank, as the op is done when the last rank
	// is done (-a 3).
	AverageMax Average = iota
	// AverageRank0: rank 0's own time, as hccl_test prints it (-a 0).
	AverageRank0
	// AverageMean: the mean over the ranks (-a 1, nccl-tests' default).
	AverageMean
	// AverageMin: the fastest rank (-a 2).
	AverageMin
)

// averageFlags maps -a's numbers to the combinations.
var averageFlags = [...]Average{AverageRank0, AverageMean, AverageMin, AverageMax}

// ParseAverage returns the combination nccl-tests' -a n names.
func ParseAverage(n int) (Average, error) {
	if n < 0 || n >= len(averageFlags) {
		return AverageMax, fmt.Errorf("%d: want 0 (rank 0), 1 (mean over ranks), 2 (min) or 3 (max)", n)
	}
	return averageFlags[n], nil
}

// Flag returns a's number for -a.
func (a Average) Flag() int {
	for i, v := range averageFlags {
		if v == a {
			return i
		}
	}
	return -1
}

// String names a as the CSV's average column does: max, rank0, mean, min.
func (a Average) String() string {
	switch a {
	case AverageRank0:
		return "rank0"
	case AverageMean:
		return "mean"
	case AverageMin:
		return "min"
	case AverageMax:
		return "max"
	}
	return fmt.Sprintf("Average(%d)", int(a))
}

// describe says what a does, for the header.
func (a Average) describe() string {
	switch a {
	case AverageRank0:
		return "the mean of rank 0's iterations (-a 0)"
	case AverageMean:
		return "the mean of each iteration's mean over the ranks (-a 1)"
	case AverageMin:
		return "the mean of the fastest rank's iterations, the rank whose loop took least (-a 2)"
	}
	return "the mean of the slowest rank's iterations, the rank whose loop took longest (-a 3)"
}

// series picks, from every rank's iteration times (perRank[rank][i]), the
// one series a row's figures are of: rank 0's, the slowest or fastest
// rank's by their sums (the lowest rank on a tie), or for AverageMean each
// iteration's mean over the ranks. Its mean is what nccl-tests' -a makes
// of each rank's mean over its timed loop.
//
// Not each iteration's slowest rank: without a barrier between them the
// ranks' iterations are not the same stretch of time (a rank that waited
// for a late peer in one finds its next message already in), so the
// per-iteration maxima add up to more than the loop lasted on any rank.
// 8 ranks on 2 CPUs, 1 KiB allreduce over shm: 20.9 us per op that way,
// where every rank's loop took at most 11.2 us an op; 2 ranks over tcp
// 11.2 against 10.0.
func (a Average) series(perRank [][]float64) []float64 {
	if len(perRank) == 0 {
		return nil
	}
	if a == AverageMean {
		out := make([]float64, len(perRank[0]))
		for i := range out {
			for _, s := range perRank {
				out[i] += s[i]
			}
			out[i] /= float64(len(perRank))
		}
		return out
	}
	pick, best := 0, 0.0
	for rk, s := range perRank {
		var sum float64
		for _, d := range s {
			sum += d
		}
		if rk == 0 || a == AverageMax && sum > best || a == AverageMin && sum < best {
			pick, best = rk, sum
		}
		if a == AverageRank0 {
			break
		}
	}
	return perRank[pick]
}

// of combines one figure of each rank (CPU time per op) as a combines
// their times.
func (a Average) of(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	out := v[0]
	switch a {
	case AverageRank0:
	case AverageMean:
		for _, x := range v[1:] {
			out += x
		}
		out /= float64(len(v))
	case AverageMin:
		for _, x := range v[1:] {
			out = min(out, x)
		}
	default:
		for _, x := range v[1:] {
			out = max(out, x)
		}
	}
	return out
}

// Blocking is nccl-tests' -z for ranks that are CPU threads or processes
// (Method.Blocking). There, 0 launches every op on a GPU stream without
// waiting and waits once at the end, 2 waits for each op, 1 waits and
// joins a barrier after each op, 3 joins a barrier (untimed) after each
// iteration. A rank here runs one op at a time on its communicator and
// an op returns when its part is done: there is no stream to queue on, so
// 0 and 2 time the same thing.
type Blocking int

// The modes of -z, by nccl-tests' numbers.
const (
	// BlockingNone issues the ops back to back with no synchronisation
	// between them (the default).
	BlockingNone Blocking = iota
	// BlockingOpBarrier joins a barrier of every rank after each op,
	// inside the timed region.
	BlockingOpBarrier
	// BlockingWait waits for each op before issuing the next: here the
	// same as BlockingNone.
	BlockingWait
	// BlockingIterBarrier joins a barrier of every rank before each timed
	// iteration, outside its time, so that every iteration starts with
	// the ranks together.
	BlockingIterBarrier
)

// describe says what b does here, for the header.
func (b Blocking) describe() string {
	switch b {
	case BlockingOpBarrier:
		return "a barrier after each op, timed with it (-z 1)"
	case BlockingWait:
		return "ops back to back, each waited for (-z 2, the same as 0 here)"
	case BlockingIterBarrier:
		return "an untimed barrier before each iteration (-z 3)"
	}
	return "ops back to back (-z 0)"
}

// MaxAggIters bounds -m.
const MaxAggIters = 10_000

// MaxUnalign bounds -u, in elements.
const MaxUnalign = 1 << 20

// MaxCheckIters bounds -c.
const MaxCheckIters = 10_000

// Validate reports the first thing wrong with m as a *fielderr.FieldError.
func (m Method) Validate() error {
	switch {
	case m.Average < AverageMax || m.Average > AverageMin:
		return fielderr.FieldErrorf("Average", " %d: want 0 to 3", m.Average.Flag())
	case m.AggIters < 0 || m.AggIters > MaxAggIters:
		return fielderr.FieldErrorf("AggIters", " %d: want 1 to %d ops per iteration", m.AggIters, MaxAggIters)
	case m.Blocking < BlockingNone || m.Blocking > BlockingIterBarrier:
		return fielderr.FieldErrorf("Blocking", " %d: want 0 to 3", int(m.Blocking))
	case m.CheckIters < 0:
		return m.ValidateCheckIters()
	case m.CheckIters > MaxCheckIters:
		return fielderr.FieldErrorf("CheckIters", " %d: want 0 to %d checked runs per row", m.CheckIters, MaxCheckIters)
	case m.Unalign < 0 || m.Unalign > MaxUnalign:
		return fielderr.FieldErrorf("Unalign", " %d: want 0 to %d elements", m.Unalign, MaxUnalign)
	}
	return nil
}

// ValidateCheckIters checks that CheckIters is not negative; Validate
// bounds it from above. Validate runs it; a command may run it where it
// reads the count, to refuse it before what it reads later.
func (m Method) ValidateCheckIters() error {
	if m.CheckIters < 0 {
		return fielderr.FieldErrorf("CheckIters", " %d: want 0 (don't check) or the checked runs per row (1 or more)", m.CheckIters)
	}
	return nil
}

// validateCPUTime checks the method against the rest of the plan: CPU
// time is the simulator's own on a backend in virtual time. The rest
// composes: with --fusion an op is every bucket, --benchtime counts every
// op's time, and --overlap's own iterations run one op each, as Blocking
// none.
func (p *Plan) validateCPUTime() error {
	if p.CPUTime && p.Caps().Simulated {
		return fielderr.FieldErrorf("CPUTime", ": the %s backend's times are virtual, and its CPU time is the simulator's", p.Backend)
	}
	return nil
}

// aggIters is the ops of one timed iteration: AggIters, at least 1.
func (m Method) aggIters() int { return max(m.AggIters, 1) }

// checkRuns is the checked runs of a row: 0 without a check, else
// CheckIters, at least 1.
func (p *Plan) checkRuns() int {
	if !p.Check {
		return 0
	}
	return max(p.CheckIters, 1)
}

// unalignBytes is the most bytes Unalign moves a buffer's start by: that
// many elements of the largest data type swept.
func (p *Plan) unalignBytes() int64 {
	var size int
	for _, dt := range p.DTypes {
		size = max(size, dt.Size())
	}
	return int64(p.Unalign) * int64(size)
}

// methodDescription says how the rows are measured, for the header.
func (p *Plan) methodDescription() string {
	parts := []string{"time is " + p.Average.describe()}
	if m := p.aggIters(); m > 1 {
		parts = append(parts, fmt.Sprintf("each iteration issues %d ops back to back and its time is divided by %d (-m %d)", m, m, m))
	}
	parts = append(parts, p.Blocking.describe())
	if p.CPUTime {
		parts = append(parts, "cputime beside it: the process's CPU time (user+system) over the timed iterations per op and rank it hosts, combined as time is (-C)")
	}
	if c := p.checkRuns(); c > 1 {
		parts = append(parts, fmt.Sprintf("%d checked runs a row on inputs filled anew, stopping at the first with a wrong element (-c %d)", c, c))
	}
	if p.Unalign > 0 {
		parts = append(parts, fmt.Sprintf("buffers start %s past their aligned base (-u %d)", results.Count(p.Unalign, "element"), p.Unalign))
	}
	return strings.Join(parts, "; ")
}
