// Package bench is the harness: it turns a Plan (collectives x data types x
// reductions x sizes x placements) into timed, checked rows, running every
// rank of the world through the selected backend. It never knows how bytes
// move.
package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/runctl"
	"github.com/hccl-test/hccl-test/world"
)

// Version is the tool's version, printed in every header (runctl.Version).
const Version = runctl.Version

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

// Plan is everything a sweep needs, in the parts a user thinks of it in:
// where it runs (World), what it measures (Sweep), the faults it injects
// (Faults), the domains it runs in (Domains), the links it is measured
// against (Links), what it reports (Outputs) and how a row is measured
// (Method). World and Faults are
// package world's, shared with the step scenarios. The parts are embedded, so p.Ranks
// is p.World.Ranks. DefaultPlan gives the defaults; Validate says
// what is wrong with a plan before any rank starts.
type Plan struct {
	world.World
	Sweep
	world.Faults
	Domains
	Links
	Outputs
	Method
}

// config is the backend configuration of the plan.
func (p *Plan) config() backends.Config {
	return p.World.Config(p.Links.WorldLinks(p.Topology), p.Retry > 0)
}

// DefaultPlan returns the defaults of the command line.
func DefaultPlan() Plan {
	return Plan{
		World: world.World{
			Backend: "shm", Ranks: 8, Timeout: 2 * time.Minute,
			ConnectTimeout: 2 * time.Minute, LaunchedRank: -1,
		},
		Sweep: Sweep{
			Ops: []coll.Op{coll.AllReduce}, DTypes: []dtype.DType{dtype.FP32}, RedOps: []dtype.ReduceOp{dtype.Sum},
			MinBytes: 32 << 20, MaxBytes: 32 << 20, StepFactor: 2,
			Runs: 1, Iters: 20, Warmup: 5, Check: true, Root: 0, Algo: coll.Auto,
			Placements: []Placement{OutOfPlace},
		},
		Links: Links{LinkSource: LinkAuto},
	}
}

// Validate reports the first thing wrong with p as an error that names
// the fields at fault (a *fielderr.FieldError, or an error wrapping one; FormatFields
// shows them as a command's flags). It runs every rule of every part's own
// Validate and the rules that span parts, in the one order of rules: that
// order says which of two wrong settings is reported.
func (p *Plan) Validate() error {
	for _, r := range p.rules() {
		if err := r.check(); err != nil {
			return err
		}
	}
	return nil
}

// planRule is one step of Plan.Validate: a part's own rules (a part's
// Validate runs them too), or a rule that spans parts.
type planRule struct {
	// part is the part whose own rules check runs ("World", "Sweep",
	// ...), or "" for a rule that spans parts.
	part string
	// name names the rule for the test that pins the order.
	name  string
	check func() error
}

// rules returns Plan.Validate's rules in the order it runs them. Each
// part's rules appear in its own Validate's order, so that a part alone
// and the plan refuse it alike; the rules that span parts sit between
// them where they did before the plan was made of parts, since that order
// says which of two wrong settings a user has always been told about
// (TestValidatePrecedence, TestValidateOrder).
func (p *Plan) rules() []planRule {
	return []planRule{
		{"World", "who", p.World.ValidateWho},
		{"Sweep", "sizes", p.Sweep.validateSizes},
		{"", "benchtime", p.validateBenchTime},
		{"", "root", p.validateRoot},
		{"Sweep", "placements", p.Sweep.validatePlacements},
		{"World", "timeouts", p.World.ValidateTimeouts},
		{"Links", "bandwidths", p.Links.Validate},
		{"", "inter link", p.validateInterLink},
		{"", "counts", p.validateCounts},
		{"", "inject", p.validateInject},
		{"Faults", "faults", p.Faults.Validate},
		{"", "retry backend", p.validateRetryBackend},
		{"Outputs", "outputs", p.Outputs.Validate},
		{"", "group layout", p.validateGroupLayout},
		{"Domains", "groups", p.Domains.validateGroups},
		{"", "group runs", p.validateGroupRuns},
		{"Domains", "ranges", p.Domains.validateRanges},
		{"", "fusion", p.validateFusion},
		{"", "traffic", p.validateTraffic},
		{"", "sim", p.validateSim},
		{"Method", "method", p.Method.Validate},
		{"", "cpu time", p.validateCPUTime},
		{"World", "master", p.World.ValidateMaster},
		{"", "backend", p.validateBackend},
		{"", "algorithms", p.validateAlgos},
		// Counted before the estimate, which counts the rows.
		{"", "memory", p.checkMemory},
		{"", "limits", p.checkLimits},
	}
}

// validateRoot checks Sweep.Root against the smallest group the sweep runs
// in: the world's, or that of a domain of Groups.
func (p *Plan) validateRoot() error {
	n := p.minGroupSize()
	switch {
	case p.Root >= -1 && p.Root < n:
		return nil
	case len(p.Groups) > 0:
		return fielderr.FieldErrorf("Root", " %d: must be -1 (every root) or a rank in [0, %d) (a rank of the group, %s %s)",
			p.Root, n, fielderr.Field("Groups"), strings.Join(p.Groups, ","))
	}
	return fielderr.FieldErrorf("Root", " %d: must be -1 (every root) or a rank in [0, %d)", p.Root, n)
}

// validateInterLink checks that a link between servers has servers.
func (p *Plan) validateInterLink() error {
	if p.LinkInterGBps > 0 && !p.Topology.TwoLevel() && !p.TopologyAuto {
		return fielderr.FieldErrorf("LinkInterGBps", ": a link between servers needs %s with more than one server", fielderr.Field("Topology"))
	}
	return nil
}

// validateInject checks Faults.Inject against the world's ranks and the
// sweep's check.
func (p *Plan) validateInject() error { return p.Inject.Validate(p.Ranks, p.Check) }

// validateRetryBackend checks that the backend can run a failed call
// again.
func (p *Plan) validateRetryBackend() error {
	if p.Retry > 0 && !p.Caps().Recovers {
		can := backends.NamesWith(func(c backends.Caps) bool { return c.Recovers })
		return fielderr.FieldErrorf("Retry", " %d: the %s backend cannot run a failed call again (use %s)", p.Retry, p.Backend, strings.Join(can, " or "))
	}
	return nil
}

// validateGroupLayout checks that Domains.Groups have a layout to split.
func (p *Plan) validateGroupLayout() error {
	if len(p.Groups) > 0 && !p.Layout.Split() {
		return fielderr.FieldErrorf("Groups", " %s: needs %s to say how the world splits (e.g. %s tp=%d)",
			strings.Join(p.Groups, ","), fielderr.Field("Layout"), fielderr.Field("Layout"), p.Ranks)
	}
	return nil
}

// validateGroupRuns checks that what the sweep asks of a run can be done
// in a group: re-execution and MPI's own collectives cover the whole world
// only.
func (p *Plan) validateGroupRuns() error {
	if len(p.Groups) == 0 {
		return nil
	}
	switch {
	case p.Retry > 0:
		return fielderr.FieldErrorf("Retry", " with %s: re-execution covers the whole world only", fielderr.Field("Groups"))
	case p.asks(coll.Native):
		return fielderr.FieldErrorf("Algo", " native with %s: MPI's collectives run on the whole world only", fielderr.Field("Groups"))
	}
	return nil
}

// validateBackend has the backend check the configuration it is given.
func (p *Plan) validateBackend() error {
	b, err := p.Resolve()
	if err != nil {
		return err
	}
	return backends.CheckConfig(b, p.config())
}

// Limits that keep a mistyped flag from asking for more rows or samples than
// any machine could hold.
const (
	maxIters = 1_000_000
)

// MemoryNeeded returns the part of the estimate (Memory) that payload
// takes, all ranks of this machine together: the sweep's buffers, the
// algorithms' scratch space and the copies --retry keeps. Without payload
// (NoPayload) none of them is backed by memory.
func (p *Plan) MemoryNeeded() int64 {
	var need int64
	for _, part := range p.Memory().Parts {
		if part.Flag == "maxbytes" || part.Flag == "retry" {
			need = limits.SatAdd(need, part.Bytes)
		}
	}
	return need
}
