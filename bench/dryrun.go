package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/results"
	"github.com/hccl-test/hccl-test/units"
)

// Rough costs behind the dry run's time estimate: what a small step and a
// byte cost on loopback-class links, so the estimate has the right order of
// magnitude before anything is measured.
const (
	estimateStep    = 50 * time.Microsecond
	estimateGBps    = 1.0
	estimateOverrun = 2 // setup, checks and gathering timings, per row
)

// DryRun writes what the plan would do, without running it: the matrix
// of rows, the sizes, the memory the run takes on this machine (Memory,
// part by part), and a rough estimate of the duration.
func (p *Plan) DryRun(w io.Writer) error {
	rows := p.Rows()
	perOp := map[string]int{}
	for _, r := range rows {
		perOp[r.Op.String()]++
	}
	var ops, dts, reds []string
	for _, op := range p.Ops {
		ops = append(ops, fmt.Sprintf("%v (%s)", op, results.Count(perOp[op.String()], "row")))
	}
	for _, d := range p.DTypes {
		dts = append(dts, d.String())
	}
	for _, o := range p.RedOps {
		reds = append(reds, o.String())
	}
	var sizes []string
	for _, s := range p.Sizes() {
		sizes = append(sizes, units.FormatSize(s))
	}
	// In float seconds: a plan at every limit at once (-n, -w, --runs, -p)
	// is past what a Duration holds; it prints as "more than 100 years".
	var estSecs float64
	runs := max(p.Runs, 1)
	for _, r := range rows {
		steps := 2 * p.Ranks
		bytes := float64(r.Bytes) * float64(max(2, r.Op.Blocks(p.Ranks)))
		one := float64(steps)*estimateStep.Seconds() + bytes/(estimateGBps*1e9)
		// -m issues aggIters ops a timed iteration; -c N, N checked runs.
		iters := p.Warmup + p.Iters*p.aggIters() + p.checkRuns() + estimateOverrun
		// --benchtime: the timed iterations take at least its time.
		estSecs += max(float64(iters)*one, float64(p.Warmup+p.checkRuns()+estimateOverrun)*one+p.BenchTime.Seconds())
	}
	estSecs *= float64(runs)
	est := fmt.Sprintf("about %v", limits.DurationOf(estSecs).Round(time.Second))
	if p.Forever() {
		est += " a run"
	}
	if estSecs > backends.ClockLimit.Seconds() {
		est = "more than 100 years"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# dry run: nothing is started\n")
	check := "off"
	if p.Check && !p.NoPayload {
		check = "on"
	}
	iters := fmt.Sprint(p.Iters)
	if p.BenchTime > 0 {
		iters = fmt.Sprintf("at least %d and --benchtime %v a row", p.Iters, p.BenchTime)
	}
	fmt.Fprintf(&b, "# backend %s  ranks %d  algo %s  runs %d  iters %s  warmup %d  check %s\n",
		p.Backend, p.Ranks, p.AlgoString(), runs, iters, p.Warmup, check)
	fmt.Fprintf(&b, "# measured: %s\n", p.methodDescription())
	fmt.Fprintf(&b, "# ops: %s\n", strings.Join(ops, ", "))
	fmt.Fprintf(&b, "# datatypes: %s\n", strings.Join(dts, " "))
	fmt.Fprintf(&b, "# redops (reducing ops only): %s\n", strings.Join(reds, " "))
	fmt.Fprintf(&b, "# sizes: %s (%s)\n", strings.Join(sizes, " "), p.SweepString())
	fmt.Fprintf(&b, "# placements: %d  roots: %s\n", len(p.Placements), rootsString(*p))
	if p.Layout.Split() {
		var in []string
		for _, g := range p.Groups {
			n := p.GroupSize(g)
			in = append(in, fmt.Sprintf("%s (%s of %d, all at once)", g, results.Count(p.Ranks/max(n, 1), "group"), n))
		}
		fmt.Fprintf(&b, "# groups: %s; the sweep runs in: %s\n", p.Layout, strings.Join(in, ", "))
	}
	if len(p.Fusion) > 0 {
		fmt.Fprintf(&b, "# fusion: each size also as %v collectives back to back\n", p.bucketList()[1:])
		if skips := p.FusionSkips(); skips != "" {
			fmt.Fprintf(&b, "# fusion: %s\n", skips)
		}
	}
	if p.Forever() {
		fmt.Fprintf(&b, "# rows: %d per run, the runs repeated until interrupted (-N 0)\n", len(rows))
	} else {
		fmt.Fprintf(&b, "# rows: %d per run, %d in all\n", len(rows), len(rows)*runs)
	}
	mem := p.Memory()
	if p.NoPayload {
		fmt.Fprintf(&b, "# memory: no payload (--sim-data=false): the buffers take address space only, results are not checked\n")
	}
	fmt.Fprintf(&b, "# memory: about %s per rank, %s for the %d ranks on this machine: %s\n",
		units.HumanSize(mem.Total()/int64(max(1, mem.Hosted))), units.HumanSize(mem.Total()), mem.Hosted, mem)
	fmt.Fprintf(&b, "# estimated time: %s (assuming %v per step and %g GB/s; the real figure depends on the machine)\n",
		est, estimateStep, estimateGBps)
	_, err := io.WriteString(w, b.String())
	return err
}

// HostedRanksOrAll returns how many ranks share this machine.
func (p *Plan) HostedRanksOrAll() int {
	if p.HostedRanks > 0 {
		return p.HostedRanks
	}
	return p.Ranks
}

func rootsString(p Plan) string {
	if p.Root < 0 {
		return "every rank in turn"
	}
	return fmt.Sprint(p.Root)
}
