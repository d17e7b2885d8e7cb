package bench

import (
	"context"
	"fmt"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/runctl"
)

// agreedFields returns the fields of p that every rank must share, as
// name=value lines in a fixed order: what decides the collectives a rank
// calls, in what order and how large, and what the harness runs around
// them (probe, calibration, checks, re-execution, faults). Addresses,
// timeouts, memory and outputs may differ between ranks.
func (p *Plan) agreedFields() []string {
	f := func(name string, v any) string { return fmt.Sprintf("%s=%v", name, v) }
	return []string{
		f("version", Version),
		f("backend", p.Backend),
		f("ranks", p.Ranks),
		f("op", p.Ops),
		f("datatype", p.DTypes),
		f("redop", p.RedOps),
		f("minbytes", p.MinBytes),
		f("maxbytes", p.MaxBytes),
		f("stepfactor", p.StepFactor),
		f("stepbytes", p.StepBytes),
		f("runs", p.runCount()),
		f("iters", p.Iters),
		f("warmup_iters", p.Warmup),
		f("benchtime", p.BenchTime),
		f("cache", p.Cache),
		f("check", p.Check),
		f("root", p.Root),
		f("algo", p.Algo),
		f("HCCL_ALGO", p.AlgoString()),
		f("placement", p.Placements),
		f("link-bw auto", p.LinkSource == LinkAuto),
		f("stats", p.Stats),
		f("topology", p.Topology),
		f("topology auto", p.TopologyAuto),
		f("groups", p.Layout.Sizes),
		f("group", p.Groups),
		f("fusion", p.Fusion),
		f("overlap", p.Overlap),
		f("overlap auto", p.OverlapAuto),
		f("retry", p.Retry),
		f("inject", p.InjectText),
		f("seed", p.Seed),
		f("sim-data", !p.NoPayload),
		f("average", p.Average),
		f("agg_iters", p.aggIters()),
		f("blocking", int(p.Blocking)),
		f("report_cputime", p.CPUTime),
		f("check_iters", p.checkRuns()),
		f("unalign", p.Unalign),
		f("traffic", p.trafficSpec().String()),
	}
}

// agreePlan has the ranks of p's world agree on p's agreedFields.
func agreePlan(ctx context.Context, p *Plan, t backends.Transport) error {
	if b, _ := p.Resolve(); !runctl.NeedsAgreement(b, p.Ranks) {
		return nil
	}
	return runctl.AgreeOn(ctx, t, p.Timeout, p.agreedFields())
}
