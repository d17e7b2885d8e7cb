package bench

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/estimate"
	"github.com/hccl-test/hccl-test/fielderr"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/units"
)

// recordBytes is one measured row held until every run is done (the
// median of --runs) with its series of timings.
const recordBytes = 1 << 10

// Memory estimates what the run takes on this machine: the sweep's
// buffers and the algorithms' scratch space at the largest size, the link
// probe (--link-bw auto), the cost model's calibration (--algo auto), the
// transport's links, the ranks' goroutines and queues, the rows and the
// process itself, or with -p over tcp every child process. Without payload
// (--sim-data=false) the buffers take address space only.
func (p *Plan) Memory() MemoryEstimate {
	hosted := int64(p.HostedRanksOrAll())
	e := MemoryEstimate{Hosted: int(hosted)}
	add := func(name, flag string, perRank int64) {
		e.Parts = append(e.Parts, MemPart{Name: name, Flag: flag, Bytes: limits.SatMul(perRank, hosted)})
	}
	var bufs, scratch, saved, premul int64
	for _, g := range p.groupList() {
		need := p.bufferNeed(p.GroupSize(g))
		bufs = max(bufs, limits.SatMul(2, need))
		// Each communicator reserves scratch space for its largest row
		// (coll.Comm.Reserve, scratchNeed), and with --retry keeps a copy of the input;
		// with mulsum, the multiplied input (coll.Comm.ReservePreMul).
		scratch = limits.SatAdd(scratch, p.scratchNeed(p.GroupSize(g)))
		if p.Retry > 0 {
			saved = limits.SatAdd(saved, need)
		}
		if p.sweepsMulSum() {
			premul = limits.SatAdd(premul, need)
		}
	}
	if p.NoPayload {
		bufs, scratch, saved, premul = 0, 0, 0, 0
	}
	add("sweep buffers", "maxbytes", bufs)
	add("algorithm scratch", "maxbytes", scratch)
	add("retry copies", "retry", saved)
	add("mulsum's multiplied inputs", "redop", premul)
	add("cold-cache buffer sets", "cache", p.coldRegionBytes())
	if p.LinkSource == LinkAuto && p.Ranks > 1 {
		add("link probe", "link-bw", 2*probeSize(p.Ranks))
	}
	if p.calibrates() {
		if large, _ := calSizes(p.Ranks); p.NoPayload || bufs < 2*large {
			add("estimate.Calibration", "algo", 2*large)
		}
	}
	p.addSamples(&e, add)
	rows := int64(unsafe.Sizeof(Row{})) * p.rowCount() / int64(max(p.Runs, 1))
	if p.Runs > 1 {
		rows += recordBytes * p.rowCount()
	}
	b, _ := p.Resolve() // nil for an unknown name, which Validate refuses
	peers := p.peersPerRank()
	e.Parts = append(e.Parts, estimate.OverheadParts(b, p.Ranks, int(hosted), p.PerProcess, peers, rows)...)
	if peers > coll.Op(0).Peers(p.Ranks) {
		add("requests in flight", "ranks", int64(2*peers)*requestBytes)
	}
	return e
}

// requestBytes is one request in flight where a rank posts a message to
// or from every peer at once (twoshot, direct): its request and the
// transport's state for it beyond the link's, as the heap grows between
// collections. Measured on sim: twoshot over 1024 ranks of 8 a server
// peaked at 2.5 to 3.1 GiB (five runs) resident where the links count 2.5 GiB, about
// 300 bytes a request (a send and a receive a peer); 512 errs high.
const requestBytes = 512

// memoryReport is the estimate as -M prints it before the sweep, part by
// part as --dry-run lists them and nccl-tests' -M splits its GPU memory:
// "sweep buffers 2.0MiB | algorithm scratch 2.0MiB | ... | total 39.1MiB,
// for the 8 ranks on this machine".
func memoryReport(e MemoryEstimate) string {
	var parts []string
	for _, p := range e.Parts {
		if p.Bytes > 0 {
			parts = append(parts, p.Name+" "+units.HumanSize(p.Bytes))
		}
	}
	return strings.Join(append(parts, "total "+units.HumanSize(e.Total())), " | ") +
		", for the " + results.Count(e.Hosted, "rank") + " on this machine"
}

// calibrates reports whether the ranks calibrate the cost model before
// the sweep (prepare): auto or --stats on a backend that is not simulated.
func (p *Plan) calibrates() bool {
	return p.needsModel() && p.modeled() == nil && p.Ranks > 1
}

// peersPerRank is how many peers one rank exchanges messages with, which
// each take a link: the most any of the plan's collectives has with the
// algorithms asked for (coll.AlgoPeers; auto may pick any, twoshot's
// rank talks to every other).
func (p *Plan) peersPerRank() int { return coll.AlgoPeersOf(p.Ops, p.memoryAlgos, p.Ranks) }

// memoryAlgos is the algorithms the plan may run op with, whose peers the
// links part counts: those named, and for auto on a simulated backend,
// whose model is known before the run, the ones auto picks for the plan's
// rows (as the run's rowModel makes it) but a pick that sends no message
// (worldTimed). Elsewhere auto's model is measured at the start and auto
// counts at op's usual peers (Auto is left out).
func (p *Plan) memoryAlgos(op coll.Op) []string {
	names := p.AlgosFor(op)
	m := p.modeled()
	if !slices.Contains(names, coll.Auto) {
		return names
	}
	// The names besides auto, and rd, which sends to a few peers, no more
	// than any algorithm: it stands for op's usual peers (Op.Peers), as
	// no names at all would mean any algorithm.
	picks := append(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == coll.Auto }), "rd")
	if m == nil {
		// Auto's pick is unknown before the run: it is counted at op's
		// usual peers, as the pick of most rows of a large world (a
		// doubling at small sizes; a run large enough for a direct
		// algorithm's pick has its buffers counted as well). Counting
		// every rank here refused a 4096-rank shm sweep of 1 KiB that ran
		// in 1.3 GB.
		return picks
	}
	figs := m.LinkFigures(p.settings())
	cal := estimate.SimCalibration(figs, p.DTypes)
	for _, row := range p.Rows() {
		if row.Op != op || row.Algo != coll.Auto {
			continue
		}
		model := rowCostModel(cal, row, p.crossesServers(row.Group))
		name, err := coll.Choose(op, coll.Auto, row.Count*row.DType.Size(), p.GroupSize(row.Group), model)
		if err != nil {
			return names
		}
		if !p.worldTimed(figs, row, name) {
			picks = append(picks, name)
		}
	}
	return picks
}

// worldTimed reports whether row's calls by the algorithm name are timed
// for the whole world in closed form, sending no message
// (coll.WorldTimed): without payload, on the world of a simulator on one
// server whose senders' ports time the messages (not fused: not
// --sim-pull), and not mulsum.
func (p *Plan) worldTimed(figs backends.LinkFigures, row Row, name string) bool {
	oneServer := figs.PerServer <= 0 || figs.PerServer >= p.Ranks
	return p.NoPayload && oneServer && !figs.Fused && row.Group == "" && row.RedOp != dtype.MulSum &&
		coll.WorldTimed(row.Op, name, row.Count, p.Ranks)
}

// checkMemory refuses a plan whose estimate is more than the memory
// available, naming the part that takes the most and the flag that
// shrinks it.
func (p *Plan) checkMemory() error {
	if p.MemLimit <= 0 {
		return nil
	}
	e := p.Memory()
	need := e.Total()
	if need <= p.MemLimit {
		return nil
	}
	big := e.Largest()
	// field and its value head the message; hint (with hintArgs, fields
	// among them) ends it.
	var (
		field    fielderr.Field
		value    any
		hint     string
		hintArgs []any
	)
	smaller := fielderr.ShortField("MaxBytes")
	switch big.Flag {
	case "maxbytes":
		field, value, hint, hintArgs = "MaxBytes", p.MaxBytes, "use a smaller %s", []any{smaller}
		if p.Caps().NoPayload {
			hint, hintArgs = hint+", or %s", append(hintArgs, fielderr.Field("NoPayload"))
		}
	case "link-bw":
		field, value, hint, hintArgs = "LinkGBps", "auto", "give the link's bandwidth (e.g. %s hccs)", []any{fielderr.Field("LinkGBps")}
	case "algo":
		field, value, hint, hintArgs = "Algo", p.AlgoString(), "name an algorithm (e.g. %s ring)", []any{fielderr.Field("Algo")}
	case "retry":
		field, value, hint, hintArgs = "Retry", p.Retry, "use a smaller %s or no %s", []any{smaller, fielderr.Field("Retry")}
	case "cache":
		field, value, hint, hintArgs = "Cache", p.Cache, "use %s warm or a smaller %s", []any{fielderr.Field("Cache"), smaller}
	case "iters":
		field, value, hint, hintArgs = "Iters", p.Iters, "use a smaller %s or fewer ranks", []any{fielderr.ShortField("Iters")}
	case "benchtime":
		field, value, hint, hintArgs = "BenchTime", p.BenchTime, "use %s, or fewer ranks (a row runs up to %d iterations)", []any{fielderr.ShortField("Iters"), maxIters}
	default:
		field, value, hint, hintArgs = "Ranks", p.Ranks, "use fewer ranks or a smaller %s", []any{smaller}
	}
	by := "available"
	if p.Limits.Memory.Set {
		by = p.Limits.Memory.Name
	}
	args := append([]any{value, units.HumanSize(need), e.Hosted, big.Name, units.HumanSize(p.MemLimit), by}, hintArgs...)
	return fielderr.FieldErrorf(field, " %v: the run needs about %s of memory for %d ranks on this machine (%s the most), more than the %s %s: "+hint, args...)
}

// sweepsMulSum reports whether the plan reduces with mulsum, whose
// multiplied inputs take memory of their own.
func (p *Plan) sweepsMulSum() bool {
	return slices.Contains(p.RedOps, dtype.MulSum) && slices.ContainsFunc(p.Ops, coll.Op.Reduces)
}
