package bench

// The header of a run: what it ran and on what.

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/results"
)

// header describes the run.
func (r *rankRunner) header() results.Header {
	p := &r.plan
	h := results.Header{
		Version: Version, Backend: p.Backend, Ranks: p.Ranks, Algo: p.AlgoString(),
		Iters: p.Iters, BenchTime: p.BenchTime, Warmup: p.Warmup, Check: p.Check, Timeout: p.Timeout,
		Sweep: p.SweepString(), Stats: p.Stats, Started: time.Now(), Runs: max(p.runCount(), 0),
		TotalRows: len(p.Rows()) * max(p.runCount(), 0), Cycles: p.Cycles, Timestamps: p.Timestamps,
		LinkGBps: p.LinkGBps, LinkSource: p.LinkSource,
		Simulated: p.simDescription(), Cache: p.Cache.String(),
		Method: p.methodDescription(), Average: p.Average.String(), AggIters: p.aggIters(),
		Blocking: int(p.Blocking), CPUTime: p.CPUTime, CheckIters: p.checkRuns(), Unalign: p.Unalign,
		MinBusBW: p.MinBusBW,
	}
	h.Host, _ = os.Hostname()
	if p.variableOps() {
		h.Traffic = p.trafficSpec().String()
	}
	switch {
	case len(p.Placements) == 2:
		h.Placement = "both"
	case p.Placements[0] == InPlace:
		h.Placement = "in"
	default:
		h.Placement = "out"
	}
	for _, op := range p.Ops {
		h.Ops = append(h.Ops, op.String())
	}
	for _, dt := range p.DTypes {
		h.DTypes = append(h.DTypes, dt.String())
	}
	for _, o := range p.RedOps {
		h.RedOps = append(h.RedOps, o.String())
	}
	if p.LinkSource == LinkAuto {
		h.LinkGBps, h.LinkSource = r.linkGBps, r.probeDescription()
		h.LLCBytes = payload.LLCBytes()
		if r.comm.Size() > 1 {
			h.LinkLoGBps, h.LinkHiGBps, h.LinkUncertain = r.linkFig.Lo, r.linkFig.Hi, !r.linkFig.Agreed
		}
	}
	if r.cal != nil {
		h.Model = r.cal.String()
	}
	if len(p.Inject) > 0 {
		h.Faults = fmt.Sprintf("%s (seed %d)", p.InjectText, p.Seed)
	}
	if p.TopologyAuto && !p.Topology.TwoLevel() {
		h.Topology = "one server: every rank on one host (--topology auto)"
	}
	if p.Topology.TwoLevel() {
		h.Topology, h.LinkRule = p.Topology.String(), p.linkRule()
		if p.TopologyAuto {
			h.Topology += ", from the ranks' hosts (--topology auto)"
		}
		h.LinkInterGBps, h.LinkInterSource = p.LinkInterGBps, p.LinkInterSource
	}
	if p.Layout.Split() {
		h.Groups = p.Layout.String()
		h.Group = strings.Join(p.Groups, ",")
	}
	h.Fusion = len(p.Fusion) > 0
	h.FusionSkips = p.FusionSkips()
	switch {
	case p.OverlapAuto:
		h.Overlap = "each collective started without blocking, then as much synthetic compute as the collective's own time, then waited for"
	case p.Overlap > 0:
		h.Overlap = fmt.Sprintf("each collective started without blocking, then %v of synthetic compute, then waited for", p.Overlap)
	}
	if h.Overlap != "" && payload.ComputeShared(p.HostedRanksOrAll()) {
		h.Overlap += fmt.Sprintf("; eff shown as -: the %d ranks here outnumber the %d cores, so compute and communication share CPUs and overlap cannot be measured",
			p.HostedRanksOrAll(), runtime.NumCPU())
	}
	if p.ReportMemory {
		h.Memory = memoryReport(p.Memory())
	}
	if p.Retry > 0 {
		h.Retry = fmt.Sprintf("an op that fails on a transport error is run again up to %s, after %v, then every %v (%s)",
			results.Count(p.Retry, "time"), p.RetryHold, p.RetryInterval, p.RetrySource)
	}
	return h
}
