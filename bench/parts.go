package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// Sweep is what a plan measures: the collectives, data types, reductions
// and sizes, with which algorithms, roots and placements, and how often.
type Sweep struct {
	// Ops are the collectives, each swept in turn.
	Ops []coll.Op
	// DTypes are the data types, each swept in turn.
	DTypes []dtype.DType
	// RedOps are swept for collectives that reduce; the others run once
	// per size with no reduction.
	RedOps []dtype.ReduceOp
	// MinBytes is the smallest size, in bytes.
	MinBytes int64
	// MaxBytes is the largest size, in bytes, included when the steps land
	// on it.
	MaxBytes int64
	// StepFactor > 1 multiplies the size each step (when StepBytes is 0).
	StepFactor float64
	// StepBytes > 0 adds to the size each step, in place of StepFactor.
	StepBytes int64
	// StepsSet says which of StepFactor and StepBytes the plan's maker
	// set, as a command line's flags given (DefaultPlan's StepFactor is a
	// default, not set): Validate refuses both set, and StepBytes set to
	// 0. Left empty, StepBytes > 0 wins over StepFactor.
	StepsSet StepsSet
	// Runs is how many times the whole sweep is repeated, at least 1, or
	// RunsForever until the run's context ends (-N 0).
	Runs int
	// Iters is the number of timed iterations per row.
	Iters int
	// BenchTime > 0 runs each row for at least this much timed work too,
	// the count predicted and agreed by the ranks (benchtime.go).
	BenchTime time.Duration
	// Warmup is the number of untimed iterations per row, before the timed
	// ones.
	Warmup int
	// Check checks every row's result (outside the timed region).
	Check bool
	// Root is the root of rooted collectives; -1 runs every root in turn.
	// Plan.Validate checks it, since its range is the smallest group's.
	Root int
	// Algo is the algorithm: a name, coll.Auto or coll.Native; or several,
	// comma-separated, which every row is measured with in turn (AlgosFor).
	Algo string
	// OpAlgos overrides Algo per collective (from HCCL_ALGO).
	OpAlgos map[coll.Op]string
	// Placements are the placements every row is measured in.
	Placements []Placement
	// Traffic is where the counts of the variable-size collectives
	// (alltoallv, allgatherv, reducescatterv) come from; its zero value is
	// nccl-tests' generated pattern (traffic.Spread, spread 1), as
	// alltoallv_perf runs without its variables.
	Traffic traffic.Spec
	// Cache is where an iteration's data comes from: CacheWarm (the
	// default) reuses one buffer set, which small rows find in the cache;
	// CacheCold rotates through enough sets that it comes from memory.
	Cache Cache
}

// Cache is where a row's data comes from between iterations (Sweep.Cache).
type Cache int

// The caches a sweep runs with.
const (
	// CacheWarm reuses one buffer set every iteration, as nccl-tests does.
	CacheWarm Cache = iota
	// CacheCold rotates through payload.ColdSets buffer sets, as rccl-tests'
	// cache flush does, so that an iteration's data comes from memory.
	CacheCold
)

// String returns warm or cold.
func (c Cache) String() string {
	if c == CacheCold {
		return "cold"
	}
	return "warm"
}

// ParseCache parses --cache: warm or cold.
func ParseCache(s string) (Cache, error) {
	switch s {
	case "warm":
		return CacheWarm, nil
	case "cold":
		return CacheCold, nil
	}
	return CacheWarm, fmt.Errorf("%q: want warm (data reused from the cache, as nccl-tests) or cold (data from memory)", s)
}

// StepsSet is which of a Sweep's two ways of stepping its maker set.
type StepsSet uint8

// The members of a StepsSet.
const (
	// FactorSet: StepFactor was set (--stepfactor given).
	FactorSet StepsSet = 1 << iota
	// BytesSet: StepBytes was set (--stepbytes given).
	BytesSet
)

// Validate reports the first thing wrong with s as a *fielderr.FieldError,
// every rule of the sweep's own in one order. The root, whose range
// depends on the world and its domains, and the counts of sizes and rows
// are left to Plan.Validate.
func (s Sweep) Validate() error { return fielderr.FirstError(s.validateSizes, s.validatePlacements) }

// validateSizes checks what is swept and how often.
func (s Sweep) validateSizes() error {
	return fielderr.FirstError(s.validateWhat, s.ValidateSteps, s.validateStepValues, s.ValidateRuns, s.validateIters)
}

// validateWhat checks that there is something to sweep, and its sizes.
func (s Sweep) validateWhat() error {
	switch {
	case len(s.Ops) == 0:
		return fielderr.FieldErrorf("Ops", ": no collective given")
	case len(s.DTypes) == 0:
		return fielderr.FieldErrorf("DTypes", ": no data type given")
	case len(s.RedOps) == 0:
		return fielderr.FieldErrorf("RedOps", ": no reduction given")
	case s.MinBytes < 0:
		return fielderr.FieldErrorf("MinBytes", " %d: must not be negative", s.MinBytes)
	case s.MaxBytes > units.MaxSize:
		return fielderr.FieldErrorf("MaxBytes", " %d: larger than the limit of %d", s.MaxBytes, int64(units.MaxSize))
	case s.MinBytes > s.MaxBytes:
		return fielderr.FieldErrorf("MinBytes", " %d is larger than %s %d", s.MinBytes, fielderr.Field("MaxBytes"), s.MaxBytes)
	}
	return nil
}

// ValidateSteps checks what StepsSet says was set: one way of stepping,
// and a step by bytes that grows. Validate runs it; a command that reads
// the steps from flags may run it where it reads them, to refuse them
// before what it reads later.
func (s Sweep) ValidateSteps() error {
	switch {
	case s.StepsSet&FactorSet != 0 && s.StepsSet&BytesSet != 0:
		return fielderr.FieldErrorf("StepFactor", " and %s: give one of them, not both", fielderr.Field("StepBytes"))
	case s.StepsSet&BytesSet != 0 && s.StepBytes == 0:
		return fielderr.FieldErrorf("StepBytes", " %d: the size would never grow", s.StepBytes)
	}
	return nil
}

// validateStepValues checks the step the sweep takes.
func (s Sweep) validateStepValues() error {
	switch {
	case s.StepBytes < 0:
		return fielderr.FieldErrorf("StepBytes", " %d: must not be negative", s.StepBytes)
	case s.StepBytes == 0 && !(s.StepFactor > 1):
		return fielderr.FieldErrorf("StepFactor", " %v: must be a number greater than 1", s.StepFactor)
	case math.IsInf(s.StepFactor, 0) || math.IsNaN(s.StepFactor):
		return fielderr.FieldErrorf("StepFactor", " %v: must be a finite number", s.StepFactor)
	}
	return nil
}

// ValidateRuns checks that the sweep runs at least once, or until
// interrupted (RunsForever); validateIters bounds it from above. Validate
// runs it; a command may run it where it reads the count, as
// ValidateSteps.
func (s Sweep) ValidateRuns() error {
	if s.Runs < 1 && s.Runs != RunsForever {
		return fielderr.FieldErrorf("Runs", " %d: must be at least 1", s.Runs)
	}
	return nil
}

// validateIters checks the iterations of a row and the runs of the sweep
// against their limits.
func (s Sweep) validateIters() error {
	switch {
	case s.Iters < 1:
		return fielderr.FieldErrorf("Iters", " %d: need at least 1 timed iteration", s.Iters)
	case s.Iters > maxIters:
		return fielderr.FieldErrorf("Iters", " %d: at most %d timed iterations per row", s.Iters, maxIters)
	case s.Warmup > maxIters:
		return fielderr.FieldErrorf("Warmup", " %d: at most %d per row", s.Warmup, maxIters)
	case s.Runs > maxIters:
		return fielderr.FieldErrorf("Runs", " %d: at most %d", s.Runs, maxIters)
	case s.Warmup < 0:
		return fielderr.FieldErrorf("Warmup", " %d: must not be negative", s.Warmup)
	}
	return nil
}

// validatePlacements checks that there is a placement to measure.
func (s Sweep) validatePlacements() error {
	if len(s.Placements) == 0 {
		return fielderr.FieldErrorf("Placements", ": none given")
	}
	return nil
}

// Domains are the communication domains a plan runs in, how its ranks sit
// on servers, and what each collective is also measured against (fusion,
// overlap).
type Domains struct {
	// Layout splits the world into communication domains.
	Layout Layout
	// LayoutText is the text Layout was parsed from, for the header.
	LayoutText string
	// Groups lists the domains the sweep runs in, one after the other,
	// every group of a domain at once; with none it runs on the whole
	// world.
	Groups []string
	// Topology places the ranks on servers.
	Topology Topology
	// TopologyAuto takes Topology from the ranks' hosts, at run time.
	TopologyAuto bool
	// Fusion lists bucket counts: each size is also measured as that many
	// collectives of size/buckets back to back. nil: off.
	Fusion []int
	// Overlap is the synthetic compute each iteration is also run
	// against, started without blocking; 0 (and OverlapAuto false): off.
	Overlap time.Duration
	// OverlapAuto runs each row against compute as long as the row's own
	// time, in place of Overlap.
	OverlapAuto bool
}

// Validate reports the first thing wrong with d as a *fielderr.FieldError. That
// Groups have a Layout to split, and the checks against the sweep (what
// re-runs or runs natively in a group, what fusion can split), are left to
// Plan.Validate.
func (d Domains) Validate() error { return fielderr.FirstError(d.validateGroups, d.validateRanges) }

// validateGroups checks the kinds of Groups.
func (d Domains) validateGroups() error {
	for i, g := range d.Groups {
		switch {
		case !slices.Contains(world.GroupKinds, g):
			return fielderr.FieldErrorf("Groups", " %q: unknown kind (want %s)", g, strings.Join(world.GroupKinds, " "))
		case slices.Contains(d.Groups[:i], g):
			return fielderr.FieldErrorf("Groups", " %s: given twice", g)
		}
	}
	return nil
}

// validateRanges checks the bucket counts of Fusion and the length of Overlap.
func (d Domains) validateRanges() error {
	for _, b := range d.Fusion {
		if b < 1 || b > MaxBuckets {
			return fielderr.FieldErrorf("Fusion", " %d: want bucket counts from 1 to %d", b, MaxBuckets)
		}
	}
	if d.Overlap < 0 || d.Overlap > time.Minute {
		return fielderr.FieldErrorf("Overlap", " %v: want a duration from 0 to 1m, or auto", d.Overlap)
	}
	return nil
}

// Links are the links a plan's util is computed against, which a backend
// that simulates its links simulates (backends.Settings.Links), with the
// backend's own options (World.Own: sim's --sim-* flags).
type Links struct {
	// LinkGBps is the link bandwidth util is computed against, in GB/s;
	// 0 with LinkSource == LinkAuto measures it before the sweep, 0
	// otherwise means unknown.
	LinkGBps float64
	// LinkSource says where LinkGBps came from, for the header, or is
	// LinkAuto.
	LinkSource string
	// LinkInterGBps is the link between servers when Domains.Topology has
	// two levels (0: the same as LinkGBps), which bounds the ops whose
	// ranks span servers.
	LinkInterGBps float64
	// LinkInterSource says where LinkInterGBps came from, for the header.
	LinkInterSource string
	// NoPayload runs the measured ops with lengths only (a backend with
	// Caps.NoPayload only, as sim): no buffer is backed by memory, nothing is copied or reduced,
	// and results are not checked (Sweep.Check is ignored). The harness's
	// own calls still carry data. Times are the same as with payload,
	// since the simulated links time messages by their lengths.
	NoPayload bool
}

// Validate reports the first thing wrong with l's bandwidths as a
// *fielderr.FieldError. Whether a link between servers has servers, and the
// simulated links, are left to Plan.Validate.
func (l Links) Validate() error {
	if l.LinkGBps < 0 || math.IsNaN(l.LinkGBps) {
		return fielderr.FieldErrorf("LinkGBps", " %v: must be positive", l.LinkGBps)
	}
	return nil
}

// RunsForever as Sweep.Runs repeats the sweep until the run is
// interrupted (nccl-tests' -N 0). Nothing a run holds grows with its runs
// then: the rows go to the outputs as they are measured.
const RunsForever = -1

// Forever reports whether the sweep repeats until interrupted.
func (s *Sweep) Forever() bool { return s.Runs == RunsForever }

// runCount is how many times the sweep runs, RunsForever for no end.
func (s *Sweep) runCount() int {
	if s.Forever() {
		return RunsForever
	}
	return max(s.Runs, 1)
}

// Outputs are what a plan reports beyond each row's times.
type Outputs struct {
	// Stats reports per-iteration statistics, and the cost model's
	// prediction, in the table.
	Stats bool
	// Cycles shows every run of a repeated sweep in the table, each row
	// with its run's number (nccl-tests' -N), rather than each row's
	// median over the runs (--runs).
	Cycles bool
	// Timestamps adds the time each row was measured to the table, CSV and
	// JSON (nccl-tests' -S).
	Timestamps bool
	// ReportMemory prints the memory estimate, part by part, in the
	// table's header (nccl-tests' -M).
	ReportMemory bool
	// MinBusBW is nccl-tests' NCCL_TESTS_MIN_BW, in GB/s: the run fails
	// when the mean bus bandwidth over every row measured is below
	// results.MinBusBWShare of it; 0: unchecked.
	MinBusBW float64
	// RankSummary writes, after each alltoallv row of the table, the
	// block nccl-tests' NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY prints: every
	// rank's bytes sent and received in the row's first draw and its
	// bandwidths over the row's time (traffic.WriteRankSummary), as
	// comment lines.
	RankSummary bool
}

// Validate reports what is wrong with o: only MinBusBW can be, when it
// is not a finite number of GB/s, 0 or more.
func (o Outputs) Validate() error {
	if math.IsNaN(o.MinBusBW) || math.IsInf(o.MinBusBW, 0) || o.MinBusBW < 0 {
		return fielderr.FieldErrorf("MinBusBW", " %v: want a positive number of GB/s", o.MinBusBW)
	}
	return nil
}
