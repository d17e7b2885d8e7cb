package predict

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hccl-test/hccl-test/clustermodel"
)

// SourcePredicted is the source column of predicted rows: no row of
// predict's was measured.
const SourcePredicted = "hccl-test predict"

// CSVColumns are predict's CSV columns: the sweep's names for what a
// sweep's CSV also has (op, ranks, size_bytes, algo, time_us, algbw_GBps,
// busbw_GBps, source), then the topology and the band.
var CSVColumns = []string{
	"op", "ranks", "servers", "per_server", "size_bytes", "algo", "time_us", "algbw_GBps", "busbw_GBps",
	"time_low_us", "time_high_us", "busbw_low_GBps", "busbw_high_GBps", "band_pct", "extrapolation_doublings", "source",
}

// WriteCSV writes rows as CSV with CSVColumns.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		rec := []string{
			r.Op.String(), strconv.Itoa(r.World.Ranks()), strconv.Itoa(r.World.Servers), strconv.Itoa(r.World.PerServer),
			strconv.FormatInt(r.Bytes, 10), r.Algo, f(r.TimeUS), f(r.AlgBW), f(r.BusBW),
			f(r.LowUS), f(r.HighUS), f(r.BusLow), f(r.BusHigh), f(r.BandPct), f(r.Doublings), SourcePredicted,
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes rows as a table for people, under a header that says
// what model predicted them and that nothing was measured.
func WriteTable(w io.Writer, modelPath string, m *clustermodel.Model, rows []Row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# predicted, not measured: the model %s (%s", modelPath, m.Source)
	if m.Device != "" {
		fmt.Fprintf(&b, " on %s", m.Device)
	}
	var worlds []string
	for _, x := range m.Fitted.Worlds {
		worlds = append(worlds, x.String())
	}
	fmt.Fprintf(&b, ", fitted on %s servers x ranks) on auto's cost model\n", strings.Join(worlds, ", "))
	if len(rows) > 0 {
		r := rows[0]
		fmt.Fprintf(&b, "# world %d servers x %d ranks = %d ranks\n", r.World.Servers, r.World.PerServer, r.World.Ranks())
	}
	if len(rows) > 0 {
		without := "the per-collective scales"
		if m.Inter != nil && m.Inter.SharedNIC() && rows[0].World.Servers > 1 && rows[0].World.PerServer > 1 {
			// The simulator gives every rank ports of its own (docs/sim.md).
			without += " and the link a server's ranks share: each rank gets one of its own there"
		}
		if m.HostGBps > 0 {
			without += fmt.Sprintf(" and the host's rate its ranks share, %.3g GB/s (host_GBps)", m.HostGBps)
		}
		var algos []string
		for _, r := range rows {
			if !slices.Contains(algos, r.Algo) {
				algos = append(algos, r.Algo)
			}
		}
		for _, a := range algos {
			fmt.Fprintf(&b, "# the same links on the simulator (without %s): %s --algo %s\n", without, SimCommand(m, rows[0].World, a), a)
		}
	}
	b.WriteString("# band: the time lies within time/(1+band) and time*(1+band), busbw likewise; the band is the fit's own error " +
		"plus its growth per doubling of ranks or servers beyond the fitted ones (extrap, in doublings)\n")
	if n := len(m.Alternatives); n > 0 {
		fmt.Fprintf(&b, "# band also covers %d other fits of the model's rows of like error (the rows cannot tell them apart): "+
			"time_lo and time_hi reach what each predicts, and band is then the wider side\n", n)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\talgo\ttime\ttime_lo\ttime_hi\talgbw\tbusbw\tbusbw_lo\tbusbw_hi\tband\textrap\t")
	fmt.Fprintln(tw, "\t(B)\t\t(us)\t(us)\t(us)\t(GB/s)\t(GB/s)\t(GB/s)\t(GB/s)\t(%)\t\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.1f\t\n", r.Op, r.Bytes, r.Algo,
			r.TimeUS, r.LowUS, r.HighUS, r.AlgBW, r.BusBW, r.BusLow, r.BusHigh, r.BandPct, r.Doublings)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SimCommand returns the hccl-test command line that runs the model's
// links on the simulated backend for world w, without payload: the levels'
// latencies and bandwidths and the reduction rate. The per-collective
// scales, a CPU backend's shared CPUs and its host's rate (HostGBps), and a link between servers shared by
// a server's ranks (Level.Ports) have no simulator flag and are
// left out. Where the model costs algo's channels as issuing apart
// (ChannelGap: multiring on devices), the command gives the simulated
// ranks that gap (--sim-gap); otherwise the simulator's default gap is
// the cost model's.
func SimCommand(m *clustermodel.Model, w clustermodel.World, algo string) string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	cmd := fmt.Sprintf("hccl-test --backend sim --sim-data=false -p %d", w.Ranks())
	if w.Servers > 1 && m.Inter != nil {
		cmd += fmt.Sprintf(" --topology servers=%d,per-server=%d --link-bw intra=%sGB/s,inter=%sGB/s --sim-alpha intra=%sus,inter=%sus",
			w.Servers, w.PerServer, g(m.Intra.GBps), g(m.Inter.GBps), g(m.Intra.AlphaUS), g(m.Inter.AlphaUS))
	} else {
		cmd += fmt.Sprintf(" --link-bw %sGB/s --sim-alpha %sus", g(m.Intra.GBps), g(m.Intra.AlphaUS))
	}
	cmd += fmt.Sprintf(" --sim-reduce %sGB/s", g(m.ReduceGBps))
	if m.Fused {
		cmd += " --sim-pull"
	}
	if channelsApart(m, algo) {
		cmd += fmt.Sprintf(" --sim-gap %v", time.Duration(ChannelGap*1e9))
	}
	return cmd
}
