package bench

import (
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/kit"
	"github.com/hccl-test/hccl-test/units"
)

// World is where a plan runs: the backend, the ranks and how they were
// started and meet, and how long they may take. Its Validate needs nothing
// outside it, so that a step scenario can take a World of its own.
type World struct {
	// Backend is the registered name of the backend that moves the bytes.
	Backend string
	// Ranks is the world size.
	Ranks int
	// Master is rank 0's rendezvous address, host:port ("": the backend
	// finds it, or needs none); see backends.Config.
	Master string
	// Bind is the address or interface the ranks listen on ("": loopback);
	// see backends.Config.
	Bind string
	// ConnectTimeout bounds setting up: the rendezvous and each connection.
	ConnectTimeout time.Duration
	// Timeout bounds one op; past it the run fails naming the op.
	Timeout time.Duration
	// Args is the command line, which the backend passes to the rank
	// processes it starts; see backends.Config.
	Args []string
	// Log receives the backend's own lines (those of the rank processes it
	// starts); see backends.Config.
	Log io.Writer
	// HostedRanks is how many ranks share this machine's memory; 0 means
	// all of them (one process, or -p on one machine).
	HostedRanks int
	// LaunchedRank is this process's rank when a launcher (or hccl-test -p)
	// started it as one rank of the world; -1 otherwise.
	LaunchedRank int
	// MemLimit is the memory the run may use in bytes (0: no limit):
	// Plan.Validate refuses a plan whose estimate (Memory) is larger.
	MemLimit int64
}

// Validate reports the first thing wrong with w as a *FieldError.
func (w World) Validate() error {
	return firstError(w.validateWho, w.validateTimeouts, w.validateMaster)
}

// validateWho checks the backend and the number of ranks.
func (w World) validateWho() error {
	if _, err := backends.Lookup(w.Backend); err != nil {
		return fieldErrorf("Backend", ": %w", err)
	}
	switch {
	case w.Ranks < 1:
		return fieldErrorf("Ranks", " %d: need at least 1 rank", w.Ranks)
	case w.Ranks > 4096:
		return fieldErrorf("Ranks", " %d: at most 4096 ranks", w.Ranks)
	}
	return nil
}

// validateTimeouts checks the limits of one op and of setting up.
func (w World) validateTimeouts() error {
	switch {
	case w.Timeout <= 0:
		return fieldErrorf("Timeout", " %v: must be positive", w.Timeout)
	case w.ConnectTimeout <= 0:
		// 0 would let the backend wait its own default, in silence.
		return fieldErrorf("ConnectTimeout", " %v: must be positive", w.ConnectTimeout)
	}
	return nil
}

// validateMaster checks the form of the rendezvous address.
func (w World) validateMaster() error {
	if w.Master == "" {
		return nil
	}
	if _, port, err := net.SplitHostPort(w.Master); err != nil || port == "" {
		return fieldErrorf("Master", " %q: want host:port, rank 0's rendezvous address", w.Master)
	}
	return nil
}

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
	// Runs is how many times the whole sweep is repeated; 0 or 1 runs it
	// once.
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
}

// Validate reports the first thing wrong with s as a *FieldError. The
// root, whose range depends on the world and its domains, and the counts
// of sizes and rows are left to Plan.Validate.
func (s Sweep) Validate() error { return firstError(s.validateSizes, s.validatePlacements) }

// validateSizes checks what is swept and how often.
func (s Sweep) validateSizes() error {
	switch {
	case len(s.Ops) == 0:
		return fieldErrorf("Ops", ": no collective given")
	case len(s.DTypes) == 0:
		return fieldErrorf("DTypes", ": no data type given")
	case len(s.RedOps) == 0:
		return fieldErrorf("RedOps", ": no reduction given")
	case s.MinBytes < 0:
		return fieldErrorf("MinBytes", " %d: must not be negative", s.MinBytes)
	case s.MaxBytes > units.MaxSize:
		return fieldErrorf("MaxBytes", " %d: larger than the limit of %d", s.MaxBytes, int64(units.MaxSize))
	case s.MinBytes > s.MaxBytes:
		return fieldErrorf("MinBytes", " %d is larger than %s %d", s.MinBytes, Field("MaxBytes"), s.MaxBytes)
	case s.StepBytes < 0:
		return fieldErrorf("StepBytes", " %d: must not be negative", s.StepBytes)
	case s.StepBytes == 0 && !(s.StepFactor > 1):
		return fieldErrorf("StepFactor", " %v: must be a number greater than 1", s.StepFactor)
	case math.IsInf(s.StepFactor, 0) || math.IsNaN(s.StepFactor):
		return fieldErrorf("StepFactor", " %v: must be a finite number", s.StepFactor)
	case s.Runs < 0:
		return fieldErrorf("Runs", " %d: must be at least 1", s.Runs)
	case s.Iters < 1:
		return fieldErrorf("Iters", " %d: need at least 1 timed iteration", s.Iters)
	case s.Iters > maxIters:
		return fieldErrorf("Iters", " %d: at most %d timed iterations per row", s.Iters, maxIters)
	case s.Warmup > maxIters:
		return fieldErrorf("Warmup", " %d: at most %d per row", s.Warmup, maxIters)
	case s.Runs > maxIters:
		return fieldErrorf("Runs", " %d: at most %d", s.Runs, maxIters)
	case s.Warmup < 0:
		return fieldErrorf("Warmup", " %d: must not be negative", s.Warmup)
	}
	return nil
}

// validatePlacements checks that there is a placement to measure.
func (s Sweep) validatePlacements() error {
	if len(s.Placements) == 0 {
		return fieldErrorf("Placements", ": none given")
	}
	return nil
}

// Faults are the faults a plan injects and how it recovers from them. Its
// Validate needs nothing outside it, so that a step scenario can take the
// Faults of its own.
type Faults struct {
	// Inject lists the faults to inject.
	Inject inject.Spec
	// InjectText is the text Inject was parsed from, to name it in errors.
	InjectText string
	// Seed seeds the random choices of Inject.
	Seed uint64
	// Retry is how many times a call that failed on a transport error is
	// run again (0: never): HCCL's operator re-execution.
	Retry int
	// RetryHold is the pause between a failure and the first re-run.
	RetryHold time.Duration
	// RetryInterval is the pause between later re-runs.
	RetryInterval time.Duration
	// RetrySource says where Retry came from, for the header.
	RetrySource string
}

// Validate reports the first thing wrong with f as a *FieldError. That
// Inject's ranks are in the world, and that the backend can re-run a call,
// are left to Plan.Validate.
func (f Faults) Validate() error {
	switch {
	case f.Retry < 0 || f.Retry > MaxRetry:
		return fieldErrorf("Retry", " %d: want 0 (off) to %d re-runs per op", f.Retry, MaxRetry)
	case f.RetryHold < 0 || f.RetryHold > MaxRetryPause:
		return fieldErrorf("RetryHold", " %v: want 0 to %v", f.RetryHold, MaxRetryPause)
	case f.RetryInterval < 0 || f.RetryInterval > MaxRetryPause:
		return fieldErrorf("RetryInterval", " %v: want 0 to %v", f.RetryInterval, MaxRetryPause)
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

// Validate reports the first thing wrong with d as a *FieldError. That
// Groups have a Layout to split, and the checks against the sweep (what
// re-runs or runs natively in a group, what fusion can split), are left to
// Plan.Validate.
func (d Domains) Validate() error { return firstError(d.validateGroups, d.validateRanges) }

// validateGroups checks the kinds of Groups.
func (d Domains) validateGroups() error {
	for i, g := range d.Groups {
		switch {
		case !slices.Contains(kit.GroupKinds, g):
			return fieldErrorf("Groups", " %q: unknown kind (want %s)", g, strings.Join(kit.GroupKinds, " "))
		case slices.Contains(d.Groups[:i], g):
			return fieldErrorf("Groups", " %s: given twice", g)
		}
	}
	return nil
}

// validateRanges checks the bucket counts of Fusion and the length of Overlap.
func (d Domains) validateRanges() error {
	for _, b := range d.Fusion {
		if b < 1 || b > MaxBuckets {
			return fieldErrorf("Fusion", " %d: want bucket counts from 1 to %d", b, MaxBuckets)
		}
	}
	if d.Overlap < 0 || d.Overlap > time.Minute {
		return fieldErrorf("Overlap", " %v: want a duration from 0 to 1m, or auto", d.Overlap)
	}
	return nil
}

// Links are the links a plan's util is computed against, and on the sim
// backend the model of the simulated links.
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
	// SimAlpha is the latency of a simulated link inside a server
	// (backend sim only; its bandwidth is LinkGBps). 0, here and in the
	// other Sim fields: the default of sim.DefaultLinkModel.
	SimAlpha time.Duration
	// SimInterAlpha is the latency of a simulated link between servers
	// (its bandwidth is LinkInterGBps).
	SimInterAlpha time.Duration
	// SimReduceGBps is the rate at which simulated ranks reduce.
	SimReduceGBps float64
	// SimCopyGBps is the rate at which simulated ranks copy between their
	// own buffers.
	SimCopyGBps float64
	// SimGap is the least time between two messages a simulated rank
	// sends; 0 takes the model's default.
	SimGap time.Duration
	// SimPull makes simulated receivers move the data, as on shared
	// memory (sim.LinkModel.Pull).
	SimPull bool
	// NoPayload runs the measured ops with lengths only (backend sim
	// only): no buffer is backed by memory, nothing is copied or reduced,
	// and results are not checked (Sweep.Check is ignored). The harness's
	// own calls still carry data. Times are the same as with payload,
	// since the simulated links time messages by their lengths.
	NoPayload bool
}

// Validate reports the first thing wrong with l's bandwidths as a
// *FieldError. Whether a link between servers has servers, and the
// simulated links, are left to Plan.Validate.
func (l Links) Validate() error {
	if l.LinkGBps < 0 || math.IsNaN(l.LinkGBps) {
		return fieldErrorf("LinkGBps", " %v: must be positive", l.LinkGBps)
	}
	return nil
}

// Outputs are what a plan reports beyond each row's times.
type Outputs struct {
	// Stats reports per-iteration statistics, and the cost model's
	// prediction, in the table.
	Stats bool
}

// Validate reports what is wrong with o: nothing, as any setting of its
// fields is one the table can show.
func (o Outputs) Validate() error { return nil }
