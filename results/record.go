// Package results holds what a run measured, one Record per row, and the
// writers that turn records into output for people and programs.
package results

import (
	"math"
	"slices"
	"time"
)

// Record is one measured row: one collective call shape timed over many
// iterations on every rank.
type Record struct {
	Op    string // collective (allreduce, ...)
	DType string // element type (fp16, ...)
	RedOp string // reduction, or "none" for collectives that do not reduce
	Root  int    // root rank, or -1 for collectives without one
	Algo  string // algorithm that ran
	// AlgoRequested is the algorithm the row asked for when the run asks
	// for several (Header.Algo lists them, comma-separated): auto or a
	// name. "" when the header's Algo says it for every row.
	AlgoRequested string
	InPlace       bool  // in-place (true) or out-of-place buffers
	Bytes         int64 // size as DESIGN.md defines it per collective
	Count         int64 // elements in Bytes
	Iters         int   // timed iterations
	// TimeUS to StdDevUS are of one series, in microseconds: the timed
	// iterations of the slowest rank, whose loop took longest (the op is
	// done when the last rank is done), or another by -a. TimeUS is its
	// mean, so MinUS <= TimeUS <= MaxUS.
	TimeUS   float64 // mean iteration
	MinUS    float64 // fastest iteration
	P50US    float64 // median iteration
	P99US    float64 // 99th percentile iteration
	MaxUS    float64 // slowest iteration
	StdDevUS float64 // population standard deviation of the iterations
	ModelUS  float64 // the cost model's prediction for Algo, in microseconds; 0 when none was made
	AlgBW    float64 // Bytes / TimeUS, in GB/s (1e9 bytes per second)
	BusBW    float64 // AlgBW x the collective's bus factor, GB/s
	Util     float64 // BusBW / link bandwidth, as a fraction; NaN when no link bandwidth is known
	Wrong    int64   // elements that differ from the expectation; -1 when not checked
	// Injected is the part of Wrong that --inject's corrupt put there in
	// calls whose result the check did not see (or saw unchanged, as a
	// max hides a flipped low bit): one element per corrupted message.
	Injected int64
	SlowRank int     // the rank with the most time in the op not spent waiting on peers
	Skew     float64 // that rank's such time over the least such rank's (>= 1)
	Run      int     // which repetition of the sweep (--runs) measured it, from 1
	Retries  int     // calls of the row that failed and were run again (--retry)
	// Group is the communication domain the row ran in (--group: tp, dp,
	// ...), every group of it at once; "" for the whole world. GroupSize
	// is the ranks in each group: busbw's n.
	Group     string
	GroupSize int
	// Buckets > 1 (--fusion): one iteration is Buckets collectives of
	// Bytes/Buckets each, back to back, where the row with Buckets 1 is
	// one collective of Bytes. FusionSpeedup is this row's time over that
	// one's: what fusing the buckets into one collective gains; 0 when
	// not known.
	Buckets       int
	FusionSpeedup float64
	// ComputeUS > 0 (--overlap): each iteration was also run started
	// without blocking, with ComputeUS of synthetic compute (as timed
	// alone) on every rank before waiting for it; TotalUS is the mean
	// time of such an iteration (slowest rank counting), and OverlapEff
	// (TimeUS + ComputeUS - TotalUS) / min(TimeUS, ComputeUS): 1 when the
	// shorter one was hidden entirely, 0 when nothing was.
	ComputeUS  float64
	TotalUS    float64
	OverlapEff float64
	Started    time.Time
	// RecvMinBytes, RecvMeanBytes and RecvMaxBytes are, for a row of a
	// variable-size collective, the bytes each rank received in the
	// traffic's matrix (its column): the least, the mean and the most, each
	// the mean over the row's draws; 0 for the other rows. Imbalance is
	// RecvMax over RecvMean (>= 1; 0: not a variable-size row), and
	// HotRank the rank that received most over the draws.
	RecvMinBytes, RecvMeanBytes, RecvMaxBytes float64
	Imbalance                                 float64
	HotRank                                   int
	// Comment is lines the table writes after the row, each starting
	// with "#" so that readers of the table skip them (nccl-tests'
	// NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY block); CSV and JSON leave them
	// out.
	Comment []string
	// Ended is when the row's measurement ended (the timestamp that
	// Header.Timestamps shows).
	Ended time.Time
	// CheckNote is what a log of another tool says of the row's check
	// when it is not a count of wrong elements (Wrong is -1 then): "failed",
	// "not checked", "max error 5e-07". "" for hccl-test's own rows.
	CheckNote string
	// CPUUS is the process CPU time per op (user and system, each
	// process's share per rank it hosts), combined over the ranks as
	// TimeUS is, in microseconds (-C); 0 when not measured.
	CPUUS float64
	// RankIterUS is every rank's time of each timed iteration, in
	// microseconds, by rank (nccl-tests' -I: the -J report's *_per_iter
	// objects); nil unless per-iteration statistics were asked for.
	RankIterUS [][]float64
}

// Key identifies the row a record measures, the same in every run.
type Key struct {
	Op, DType, RedOp string
	Root             int
	InPlace          bool
	Bytes            int64
	Group            string
	Buckets          int
	AlgoRequested    string // when the run asks for several algorithms
}

// Key returns the record's row key.
func (r Record) Key() Key {
	return Key{Op: r.Op, DType: r.DType, RedOp: r.RedOp, Root: r.Root, InPlace: r.InPlace, Bytes: r.Bytes,
		Group: r.Group, Buckets: max(r.Buckets, 1), AlgoRequested: r.AlgoRequested}
}

// FasterThanLink reports whether the row moved data faster than its link
// (util above 100%): its data sat in a cache, while the link was measured
// from memory. The table marks such a row's util with FasterMark.
func (r Record) FasterThanLink() bool { return !math.IsNaN(r.Util) && r.Util > 1 }

// FasterMark follows the util of a row that moved data faster than its
// link (Record.FasterThanLink) in the table.
const FasterMark = "!"

// Checked reports whether the row's result was checked.
func (r Record) Checked() bool { return r.Wrong >= 0 }

// Header describes a run: everything that is the same for all its rows.
type Header struct {
	Version    string
	Backend    string
	Ranks      int
	Algo       string   // as asked for (auto, a name, or several comma-separated)
	Placement  string   // out, in or both
	Ops        []string // collectives swept, in order
	DTypes     []string
	RedOps     []string
	Sweep      string // human description of the sizes
	Iters      int
	Warmup     int
	Check      bool
	Timeout    time.Duration
	LinkGBps   float64 // link bandwidth in GB/s; 0 when unknown
	LinkSource string  // how the link bandwidth was obtained
	// LinkLoGBps and LinkHiGBps are the lowest and highest reading of the
	// link probe's repetitions (--link-bw auto), 0 when not probed;
	// LinkUncertain says that they did not agree, so util is uncertain.
	LinkLoGBps, LinkHiGBps float64
	LinkUncertain          bool
	// LLCBytes is the host's last-level cache with --link-bw auto (0 when
	// not read): a row larger than it did not run from cache.
	LLCBytes int64
	// Topology describes the servers (--topology), "" for one level;
	// LinkInterGBps and LinkInterSource the link between servers (0 when
	// not given), and LinkRule which domains util compares with which.
	Topology        string
	LinkInterGBps   float64
	LinkInterSource string
	LinkRule        string
	Stats           bool // show per-iteration statistics columns
	// MinBusBW is NCCL_TESTS_MIN_BW in GB/s, 0 when not set: the footer's
	// nccl-tests average says OK or FAILED against it (Summary.BelowMin).
	MinBusBW float64
	// Traffic is the spec of the counts of the variable-size collectives
	// (alltoallv, ...) when the run sweeps one, "" otherwise.
	Traffic     string
	Model       string // the cost model's constants as calibrated, "" when none
	Faults      string // the faults injected (--inject), "" when none
	Retry       string // the re-execution policy (--retry), "" when off
	Groups      string // the layout of communication domains (--groups), "" when none
	Group       string // the domain the sweep ran in (--group), "" for the whole world
	Fusion      bool   // rows compare fused and split collectives (--fusion)
	FusionSkips string // which bucket counts some sizes are too small for, "" when none
	Overlap     string // how collectives were overlapped with compute (--overlap), "" when not
	Runs        int    // repetitions of the whole sweep (--runs, -N); 0 until interrupted (-N 0)
	// Cycles: each run's rows are shown in the table with the run's number
	// (-N), rather than each row's median over the runs.
	Cycles bool
	// Timestamps: the table, CSV and JSON give each row the time it was
	// measured (Record.Ended; -S).
	Timestamps bool
	// Memory is the memory estimate part by part, printed before the rows
	// (-M); "" when not asked for.
	Memory    string
	TotalRows int // rows the run will measure, all runs together; 0 when unknown
	Started   time.Time
	Host      string
	// Simulated describes the simulated links when the backend runs in
	// virtual time (sim), "" otherwise; the table prints it under the
	// backend.
	Simulated string
	// BenchTime > 0: each row ran at least Iters iterations and this
	// much timed work (--benchtime), its own count in Record.Iters.
	BenchTime time.Duration
	// Cache is where an iteration's data came from: warm (one buffer set
	// reused, "" reads as warm) or cold (sets rotated so that it came
	// from memory, --cache cold).
	Cache string
	// Source is the tool that measured the run: "" (or SourceOurs) for
	// hccl-test, else the tool whose log was read (ReadLog).
	Source string
	// RankHosts is where the ranks of a log's run sat, as the log says
	// (its rank-to-host lines, a -J report's devices); the zero value
	// when it does not, and for hccl-test's own runs (see Host and
	// Topology).
	RankHosts Topology
	// RunID names the run where Started and Host cannot (a log read
	// from a file); "" derives the id from them (see RunID).
	RunID string
	// Method says how each row was measured (-a, -m, -z, -C, -c N, -u),
	// for the table; "" for a run that predates them.
	Method string
	// Average is how the ranks' times of an iteration combined (-a): max
	// ("" reads as max), rank0, mean or min.
	Average string
	// AggIters is the ops issued back to back per timed iteration (-m),
	// whose time was divided by it; 0 reads as 1.
	AggIters int
	// Blocking is nccl-tests' -z mode the iterations ran with (0 to 3).
	Blocking int
	// CPUTime: rows carry their CPU time per op (Record.CPUUS, -C).
	CPUTime bool
	// CheckIters is the checked runs per row (-c N); 0 reads as 1 when
	// Check is on.
	CheckIters int
	// Unalign is the elements every buffer started past its aligned base
	// (-u).
	Unalign int
}

// Summary is what the footer reports about a finished (or interrupted) run.
type Summary struct {
	Rows  int
	Wrong int64 // total wrong elements over checked rows
	// Injected is the part of Wrong that injected corruption contributed
	// where the check did not see it (Record.Injected).
	Injected int64
	Retries  int // calls run again, over all rows
	// BigRows and BigBusBW are the number and mean bus bandwidth of the rows
	// of at least BigRowBytes, every record measured counting (with --runs,
	// each run's); the table's footer averages the rows it shows instead.
	BigRows  int
	BigBusBW float64
	// BigByAlgo is the same per algorithm asked for, in the order they
	// ran, when the run asks for several (Record.AlgoRequested).
	BigByAlgo []AlgoBusBW
	// AllRows and AllBusBW are the number and mean bus bandwidth of every
	// record measured, of every size and placement: nccl-tests' "Avg bus
	// bandwidth", which -J's average_bus_bandwidth gives too.
	AllRows  int
	AllBusBW float64
	Err      error // the error that ended the run early, if any
}

// MinBusBWShare is the share of NCCL_TESTS_MIN_BW below which nccl-tests
// says FAILED (its check_avg_bw*0.9).
const MinBusBWShare = 0.9

// BelowMin reports whether mean, a mean bus bandwidth in GB/s, fails
// NCCL_TESTS_MIN_BW's check against min (0: unchecked, never fails), as
// nccl-tests judges it: below MinBusBWShare of min.
func BelowMin(mean, min float64) bool { return min > 0 && !(mean >= min*MinBusBWShare) }

// MinBusBWVerdict is what nccl-tests appends to its "Avg bus bandwidth"
// line: "" when min is 0 (unchecked), else OK or FAILED.
func MinBusBWVerdict(mean, min float64) string {
	switch {
	case min <= 0:
		return ""
	case BelowMin(mean, min):
		return "FAILED"
	}
	return "OK"
}

// AlgoBusBW is the mean bus bandwidth of one algorithm's rows of at least
// BigRowBytes.
type AlgoBusBW struct {
	Algo  string
	Rows  int
	BusBW float64
}

// BigRowBytes is the smallest row size that counts towards the footer's
// mean bus bandwidth: smaller rows measure latency, not bandwidth.
const BigRowBytes = 1 << 20

// Add accounts for one record.
func (s *Summary) Add(r Record) {
	s.Rows++
	s.Retries += r.Retries
	if r.Wrong > 0 {
		s.Wrong += r.Wrong
		s.Injected += r.Injected
	}
	if !math.IsNaN(r.BusBW) {
		addToMean(&s.AllBusBW, &s.AllRows, r.BusBW)
	}
	if r.Bytes >= BigRowBytes && !math.IsNaN(r.BusBW) {
		addToMean(&s.BigBusBW, &s.BigRows, r.BusBW)
		if r.AlgoRequested != "" {
			i := slices.IndexFunc(s.BigByAlgo, func(a AlgoBusBW) bool { return a.Algo == r.AlgoRequested })
			if i < 0 {
				s.BigByAlgo = append(s.BigByAlgo, AlgoBusBW{Algo: r.AlgoRequested})
				i = len(s.BigByAlgo) - 1
			}
			addToMean(&s.BigByAlgo[i].BusBW, &s.BigByAlgo[i].Rows, r.BusBW)
		}
	}
}

// addToMean adds x to the mean of n values, and counts it.
func addToMean(mean *float64, n *int, x float64) {
	*mean = (*mean*float64(*n) + x) / float64(*n+1)
	*n++
}

// Sink receives a run as it happens: the header once, each row as soon as it
// is measured (so an interrupted run keeps what it measured), then the
// summary.
type Sink interface {
	Begin(h Header) error
	Write(r Record) error
	End(s Summary) error
}
