// Package bench is the harness: it turns a Plan (collectives x data types x
// reductions x sizes x placements) into timed, checked rows, running every
// rank of the world through the selected backend. It never knows how bytes
// move.
package bench

import (
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/backends/inject"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/kit"
	"github.com/hccl-test/hccl-test/units"
)

// Version is the tool's version, printed in every header (kit.Version).
const Version = kit.Version

// ParsePlacements returns the placements that --placement names: out, in or
// both.
func ParsePlacements(s string) ([]Placement, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "out", "out-of-place":
		return []Placement{OutOfPlace}, nil
	case "in", "in-place":
		return []Placement{InPlace}, nil
	case "both":
		return []Placement{OutOfPlace, InPlace}, nil
	}
	return nil, fmt.Errorf("unknown placement %q (want out, in or both)", s)
}

// LinkAuto is the LinkBW source that asks the harness to measure the link.
const LinkAuto = "auto"

// Plan is everything a sweep needs. DefaultPlan gives the defaults;
// Validate says what is wrong with a plan before any rank starts.
type Plan struct {
	Backend string // registered backend name
	Ranks   int    // world size
	Ops     []coll.Op
	DTypes  []dtype.DType
	// RedOps are swept for collectives that reduce; the others run once
	// per size with no reduction.
	RedOps   []dtype.ReduceOp
	MinBytes int64
	MaxBytes int64
	// StepFactor > 1 multiplies the size each step; otherwise StepBytes > 0
	// adds to it.
	StepFactor float64
	StepBytes  int64
	Runs       int  // repetitions of the whole sweep; 0 or 1 runs it once
	Iters      int  // timed iterations per row
	Warmup     int  // untimed iterations per row, before the timed ones
	Check      bool // check every row's result (outside the timed region)
	// Root is the root of rooted collectives; -1 runs every root in turn.
	Root int
	// Algo is the algorithm: a name, coll.Auto or coll.Native; or several,
	// comma-separated, which every row is measured with in turn (AlgosFor).
	Algo string
	// Inject lists the faults to inject (--inject), Seed their random
	// choices.
	Inject     inject.Spec
	InjectText string
	Seed       uint64
	// Retry is how many times a call that failed on a transport error is
	// run again (0: never), after RetryHold the first time and
	// RetryInterval between later re-runs (HCCL's operator re-execution);
	// RetrySource says where the setting came from.
	Retry                    int
	RetryHold, RetryInterval time.Duration
	RetrySource              string
	// Layout splits the world into communication domains (--groups), and
	// Groups lists the domains the sweep runs in, one after the other
	// (--group), every group of a domain at once; with none it runs on the
	// whole world.
	Layout     Layout
	LayoutText string
	Groups     []string
	// Fusion lists bucket counts (--fusion): each size is also measured
	// as that many collectives of size/buckets back to back. nil: off.
	Fusion []int
	// Overlap, or with OverlapAuto each row's own time, is the synthetic
	// compute each iteration is also run against (--overlap); 0 and false:
	// off.
	Overlap     time.Duration
	OverlapAuto bool
	// OpAlgos overrides Algo per collective (from HCCL_ALGO).
	OpAlgos    map[coll.Op]string
	Placements []Placement
	// LinkGBps is the link bandwidth util is computed against, in GB/s;
	// 0 with LinkSource == LinkAuto measures it before the sweep, 0
	// otherwise means unknown.
	LinkGBps   float64
	LinkSource string
	// Topology places the ranks on servers (--topology); with two levels,
	// LinkInterGBps is the link between servers (--link-bw
	// intra=...,inter=...; 0: the same as LinkGBps), which bounds the ops
	// whose ranks span servers.
	Topology        Topology
	TopologyAuto    bool // --topology auto: from the ranks' hosts, at run time
	LinkInterGBps   float64
	LinkInterSource string
	Timeout         time.Duration // limit for one op
	Stats           bool          // report per-iteration statistics in the table
	// SimAlpha and SimInterAlpha are the latencies of the simulated links
	// inside and between servers, SimReduceGBps the rate at which
	// simulated ranks reduce and SimCopyGBps the rate at which they copy
	// between their own buffers (--backend sim: --sim-alpha, --sim-reduce,
	// --sim-copy); the bandwidths are LinkGBps and LinkInterGBps. 0: the
	// defaults of sim.DefaultLinkModel.
	SimAlpha, SimInterAlpha    time.Duration
	SimReduceGBps, SimCopyGBps float64
	// SimGap is the least time between two messages a simulated rank
	// sends (--sim-gap); 0 takes the model's default.
	SimGap time.Duration
	// SimPull makes simulated receivers move the data, as on shared
	// memory (--sim-pull; sim.LinkModel.Pull).
	SimPull bool
	// NoPayload runs the measured ops with lengths only (--sim-data=false,
	// --backend sim only): no buffer is backed by memory, nothing is copied
	// or reduced, and results are not checked (Check is ignored). The
	// harness's own calls still carry data. Times are the same as with
	// payload, since the simulated links time messages by their lengths.
	NoPayload bool
	// MemLimit is the memory the run may use in bytes (0: no limit):
	// Validate refuses a plan whose estimate (Memory) is larger.
	MemLimit int64
	// HostedRanks is how many ranks share this machine's memory; 0 means
	// all of them (one process, or -p on one machine).
	HostedRanks int
	// LaunchedRank is this process's rank when a launcher (or hccl-test -p)
	// started it as one rank of the world; -1 otherwise.
	LaunchedRank int

	// Master, Bind, ConnectTimeout and Args are passed to a backend whose
	// ranks meet at an address or that starts rank processes (see
	// tcp.Options), Log to every backend (backends.Config).
	Master         string
	Bind           string
	ConnectTimeout time.Duration
	Args           []string
	Log            io.Writer
}

// ApplyLauncher takes the world size from the launcher that started this
// process, if the backend supports launchers and one did. ranksGiven says
// whether the user chose Ranks; a different choice is an error.
func (p *Plan) ApplyLauncher(ranksGiven bool) error {
	b, err := backends.Lookup(p.Backend)
	if err != nil {
		return fmt.Errorf("--backend: %w", err)
	}
	l, ok := b.(backends.Launched)
	if !ok {
		return nil
	}
	w, launched, err := l.LaunchedWorld(p.config())
	if err != nil || !launched {
		return err
	}
	if ranksGiven && p.Ranks != w.Size {
		return fmt.Errorf("--ranks %d: this process was started by %s", p.Ranks, w.Source)
	}
	p.Ranks, p.HostedRanks, p.LaunchedRank = w.Size, 1, w.Rank
	return nil
}

// WritesOutput reports whether this process writes the run's output: it
// hosts rank 0, the rank that collects every result.
func (p Plan) WritesOutput() bool { return p.LaunchedRank <= 0 }

// config is the backend configuration of the plan.
func (p Plan) config() backends.Config {
	return backends.Config{
		Ranks: p.Ranks, Log: p.Log, Retry: p.Retry > 0,
		Options: kit.BackendOptions(p.Backend, kit.WorldOptions{Links: p.simLinks(),
			Master: p.Master, Bind: p.Bind, ConnectTimeout: p.ConnectTimeout, Args: p.Args}),
	}
}

// DefaultPlan returns the defaults of the command line.
func DefaultPlan() Plan {
	return Plan{
		Backend: "shm", Ranks: 8,
		Ops: []coll.Op{coll.AllReduce}, DTypes: []dtype.DType{dtype.FP32}, RedOps: []dtype.ReduceOp{dtype.Sum},
		MinBytes: 32 << 20, MaxBytes: 32 << 20, StepFactor: 2,
		Iters: 20, Warmup: 5, Check: true, Root: 0, Algo: coll.Auto,
		Placements: []Placement{OutOfPlace}, LinkSource: LinkAuto, Timeout: 2 * time.Minute,
		ConnectTimeout: 2 * time.Minute, LaunchedRank: -1,
	}
}

// Validate reports the first thing wrong with p as an error naming the
// flag and the value.
func (p Plan) Validate() error {
	if _, err := backends.Lookup(p.Backend); err != nil {
		return fmt.Errorf("--backend: %w", err)
	}
	switch {
	case p.Ranks < 1:
		return fmt.Errorf("--ranks %d: need at least 1 rank", p.Ranks)
	case p.Ranks > 4096:
		return fmt.Errorf("--ranks %d: at most 4096 ranks", p.Ranks)
	case len(p.Ops) == 0:
		return fmt.Errorf("--op: no collective given")
	case len(p.DTypes) == 0:
		return fmt.Errorf("--datatype: no data type given")
	case len(p.RedOps) == 0:
		return fmt.Errorf("--redop: no reduction given")
	case p.MinBytes < 0:
		return fmt.Errorf("--minbytes %d: must not be negative", p.MinBytes)
	case p.MaxBytes > units.MaxSize:
		return fmt.Errorf("--maxbytes %d: larger than the limit of %d", p.MaxBytes, int64(units.MaxSize))
	case p.MinBytes > p.MaxBytes:
		return fmt.Errorf("--minbytes %d is larger than --maxbytes %d", p.MinBytes, p.MaxBytes)
	case p.StepBytes < 0:
		return fmt.Errorf("--stepbytes %d: must not be negative", p.StepBytes)
	case p.StepBytes == 0 && !(p.StepFactor > 1):
		return fmt.Errorf("--stepfactor %v: must be a number greater than 1", p.StepFactor)
	case math.IsInf(p.StepFactor, 0) || math.IsNaN(p.StepFactor):
		return fmt.Errorf("--stepfactor %v: must be a finite number", p.StepFactor)
	case p.Runs < 0:
		return fmt.Errorf("--runs %d: must be at least 1", p.Runs)
	case p.Iters < 1:
		return fmt.Errorf("--iters %d: need at least 1 timed iteration", p.Iters)
	case p.Iters > maxIters:
		return fmt.Errorf("--iters %d: at most %d timed iterations per row", p.Iters, maxIters)
	case p.Warmup > maxIters:
		return fmt.Errorf("--warmup_iters %d: at most %d per row", p.Warmup, maxIters)
	case p.Runs > maxIters:
		return fmt.Errorf("--runs %d: at most %d", p.Runs, maxIters)
	case p.Warmup < 0:
		return fmt.Errorf("--warmup_iters %d: must not be negative", p.Warmup)
	case p.Root < -1 || p.Root >= p.minGroupSize():
		return fmt.Errorf("--root %d: must be -1 (every root) or a rank in [0, %d)%s", p.Root, p.minGroupSize(), p.groupNote())
	case len(p.Placements) == 0:
		return fmt.Errorf("--placement: none given")
	case p.Timeout <= 0:
		return fmt.Errorf("--timeout %v: must be positive", p.Timeout)
	case p.ConnectTimeout <= 0:
		// 0 would let the backend wait its own default, in silence.
		return fmt.Errorf("--connect-timeout %v: must be positive", p.ConnectTimeout)
	case p.LinkGBps < 0 || math.IsNaN(p.LinkGBps):
		return fmt.Errorf("--link-bw %v: must be positive", p.LinkGBps)
	case p.LinkInterGBps > 0 && !p.Topology.TwoLevel() && !p.TopologyAuto:
		return fmt.Errorf("--link-bw inter=: a link between servers needs --topology with more than one server")
	}
	if err := p.validateCounts(); err != nil {
		return err
	}
	if err := p.Inject.Validate(p.Ranks, p.Check); err != nil {
		return err
	}
	if err := p.validateRetry(); err != nil {
		return err
	}
	if err := p.validateDomains(); err != nil {
		return err
	}
	if err := p.validateSim(); err != nil {
		return err
	}
	if p.Master != "" {
		if _, port, err := net.SplitHostPort(p.Master); err != nil || port == "" {
			return fmt.Errorf("--master %q: want host:port, rank 0's rendezvous address", p.Master)
		}
	}
	if err := backends.CheckConfig(p.Backend, p.config()); err != nil {
		return err
	}
	if err := p.validateAlgos(); err != nil {
		return err
	}
	// Counted before the estimate, which counts the rows.
	if err := p.checkMemory(); err != nil {
		return err
	}
	return nil
}

// Limits that keep a mistyped flag from asking for more rows or samples than
// any machine could hold.
const (
	maxIters = 1_000_000
	// MaxRetry and MaxRetryPause bound --retry and its pauses, as HCCL
	// bounds MaxCnt, HoldTime and IntervalTime.
	MaxRetry      = 10
	MaxRetryPause = time.Minute
)

// validateRetry checks the re-execution settings.
func (p Plan) validateRetry() error {
	switch {
	case p.Retry < 0 || p.Retry > MaxRetry:
		return fmt.Errorf("--retry %d: want 0 (off) to %d re-runs per op", p.Retry, MaxRetry)
	case p.RetryHold < 0 || p.RetryHold > MaxRetryPause:
		return fmt.Errorf("--retry-hold %v: want 0 to %v", p.RetryHold, MaxRetryPause)
	case p.RetryInterval < 0 || p.RetryInterval > MaxRetryPause:
		return fmt.Errorf("--retry-interval %v: want 0 to %v", p.RetryInterval, MaxRetryPause)
	case p.Retry > 0 && !capsOf(p.Backend).Recovers:
		can := backends.NamesWith(func(c backends.Caps) bool { return c.Recovers })
		return fmt.Errorf("--retry %d: the %s backend cannot run a failed call again (use %s)", p.Retry, p.Backend, strings.Join(can, " or "))
	}
	return nil
}

// bufferBytes returns the send and receive buffer sizes one rank needs for
// op at a row size of size bytes.
func bufferBytes(op coll.Op, n int, size int64) (send, recv int64) {
	switch op {
	case coll.AllGather, coll.Gather:
		return size / int64(n), size
	case coll.ReduceScatter, coll.Scatter:
		return size, size / int64(n)
	default:
		return size, size
	}
}

// MemoryNeeded returns the part of the estimate (Memory) that payload
// takes, all ranks of this machine together: the sweep's buffers, the
// algorithms' scratch space and the copies --retry keeps. Without payload
// (NoPayload) none of them is backed by memory.
func (p Plan) MemoryNeeded() int64 {
	var need int64
	for _, part := range p.Memory().Parts {
		if part.Flag == "maxbytes" || part.Flag == "retry" {
			need = kit.SatAdd(need, part.Bytes)
		}
	}
	return need
}
