package predict

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hccl-test/hccl-test/clustermodel"
)

// WriteReport writes what fit found, for people: each figure of the model
// and the rows it came from, what each collective's curve said, and every
// fitted row with its residual under the model.
func (f *Fit) WriteReport(w io.Writer) error {
	m := f.Model
	var b strings.Builder
	fmt.Fprintf(&b, "# fit of %s", m.Source)
	if m.Device != "" {
		fmt.Fprintf(&b, " on %s", m.Device)
	}
	fmt.Fprintf(&b, ": %d rows", len(f.Rows))
	if f.Skipped > 0 {
		fmt.Fprintf(&b, " (%d more skipped: no time, one rank, a collective of no algorithm of ours, or below --min-size)", f.Skipped)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "intra  alpha %.3f us  bw %.3f GB/s  from %s\n", m.Intra.AlphaUS, m.Intra.GBps, m.Intra.From)
	if m.Inter != nil {
		fmt.Fprintf(&b, "inter  alpha %.3f us  bw %.3f GB/s  from %s\n", m.Inter.AlphaUS, m.Inter.GBps, m.Inter.From)
		f.writePorts(&b)
	} else {
		b.WriteString("inter  none: every run was one server (predict predicts one server only)\n")
	}
	fmt.Fprintf(&b, "reduce %.3f GB/s", m.ReduceGBps)
	switch {
	case !hasReducing(f):
		b.WriteString("  (no reducing collective fitted: the start value, not a fit)")
	case m.ReduceGBps > 100*m.Intra.GBps:
		b.WriteString("  (the rows show no cost of reducing: any rate this high fits them)")
	}
	b.WriteString("\n")
	var tried []string
	for _, c := range f.Cores {
		tried = append(tried, fmt.Sprintf("%d %.2f%%", c.Cores, c.RMSPct))
	}
	switch {
	case m.Fused:
		fmt.Fprintf(&b, "transport: a receiver reads the sender's memory and reduces in the same pass; the ranks share %d CPUs (the count that fits best, of a power of two below --cores or --cores; rms error of every fitted row by count: %s)\n", m.Cores, strings.Join(tried, ", "))
	case m.SenderMoves:
		fmt.Fprintf(&b, "transport: a sender's CPU copies every message out; the ranks share %d CPUs (the count that fits best, of a power of two below --cores or --cores; rms error of every fitted row by count: %s)\n", m.Cores, strings.Join(tried, ", "))
	default:
		b.WriteString("transport: devices that move data without the CPUs\n")
	}
	if h := f.Host; h.GBps > 0 {
		verdict := "left out: it fits no better by 5% of the summed squared log errors"
		if h.Told {
			verdict = "kept"
		}
		fmt.Fprintf(&b, "host   %.3f GB/s written by a server's ranks together (host_GBps; rms error of every fitted row with it %.2f%%, without %.2f%%): %s\n",
			h.GBps, h.RMSPct, h.NoneRMSPct, verdict)
	}
	f.writeOptima(&b)
	b.WriteString("#\n# per collective: scales on the levels' bandwidths and latencies, the algorithm of ours its curve fits, residuals of its rows\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tbw_scale\tlat_scale\trows\tmedian_err%\tworst_err%\tlarge_p75%\tgrowth%/doubling\tshape")
	for _, o := range m.Ops {
		growth := "-"
		if o.GrowthPct > 0 {
			growth = fmt.Sprintf("%.2f", o.GrowthPct)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\n", o.Name, o.BWScale, o.LatScale, o.Rows, o.MedianPct, o.WorstPct,
			o.LargeP75Pct, growth, o.Note)
	}
	tw.Flush()
	b.WriteString("#\n# every fitted row: measured and model time, and the residual (model - measured) / measured\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "file\twhere\top\tworld\tsize\tran\tmodel_algo\tmeasured_us\tmodel_us\tresidual%")
	for _, r := range f.Rows {
		ran := r.Sample.Algo
		if ran == "" {
			ran = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%.2f\t%.2f\t%+.2f\n", r.File, r.Where, r.Op, r.World, r.Bytes, ran, r.Algo,
			r.TimeUS, r.PredUS, r.ErrPct)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// hasReducing reports whether a reducing collective was fitted.
func hasReducing(f *Fit) bool {
	for _, r := range f.Rows {
		if r.Op.Reduces() {
			return true
		}
	}
	return false
}

// writePorts says whose the link between servers is in the model and
// why: how well each choice fitted every row.
func (f *Fit) writePorts(b *strings.Builder) {
	if len(f.Ports) == 0 {
		var ws []int
		for _, w := range f.Model.Fitted.Worlds {
			if w.Servers > 1 && !slices.Contains(ws, w.PerServer) {
				ws = append(ws, w.PerServer)
			}
		}
		if len(ws) == 1 && ws[0] > 1 {
			fmt.Fprintf(b, "inter  ports rank: %s by default; every fitted world of several servers has %d ranks a server, which cannot tell it from one link a server (fit runs of several servers of 1 and of several ranks a server together to tell)\n",
				portsWords[clustermodel.PortsRank], ws[0])
		}
		return
	}
	var tried []string
	for _, t := range f.Ports {
		tried = append(tried, fmt.Sprintf("%s %.2f%%", portsWords[t.Ports], t.RMSPct))
	}
	chose := portsWords[cmp.Or(f.Model.Inter.Ports, clustermodel.PortsRank)]
	if f.PortsTold {
		fmt.Fprintf(b, "inter  ports %s: %s, the rows tell (rms error of every fitted row: %s)\n", f.Model.Inter.Ports, chose, strings.Join(tried, ", "))
		return
	}
	fmt.Fprintf(b, "inter  ports %s: %s by default; the rows do not tell (rms error of every fitted row: %s, within %.0f%%): fit runs of several servers of 1 and of several ranks a server together to tell\n",
		cmp.Or(f.Model.Inter.Ports, clustermodel.PortsRank), chose, strings.Join(tried, ", "), 100*portsTold)
}

// portsWords says what each value of clustermodel.Level.Ports means.
var portsWords = map[string]string{
	clustermodel.PortsRank:   "a link between servers a rank",
	clustermodel.PortsServer: "one link a server, its ranks share it",
}
