package isolate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the live report for a person: the pairs and hosts as
// for logs, then the groups of the bisection, what rank 0 did not hear,
// and every group named.
func (r *LiveReport) WriteText(w io.Writer) error {
	if err := r.Report.WriteText(w); err != nil {
		return err
	}
	ew := &errWriter{w: w}
	if len(r.Groups) > 0 {
		fmt.Fprintf(ew, "\ngroups (allreduce of all their ranks): ratio = group busbw / median busbw of its pairs; baseline %s, slow below %s\n",
			ratio(r.GroupBaseline), ratio(r.GroupThreshold))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "level\thosts\tranks\tGB/s\tpairs GB/s\tratio\tverdict\tevidence")
		for _, g := range r.Groups {
			verdict := g.Verdict
			switch {
			case g.Named:
				verdict = strings.ToUpper(verdict) + " (named)"
			case g.Explained != "":
				verdict += " (" + g.Explained + ")"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", g.Level, strings.Join(g.Hosts, ","), g.Ranks,
				num(g.Figure), num(g.PairMedian), ratio(g.Ratio), verdict, g.Failure)
		}
		tw.Flush()
	}
	for _, u := range r.Unreported {
		fmt.Fprintf(ew, "no report from %s\n", u)
	}
	for _, g := range r.Groups {
		if g.Named {
			evidence := fmt.Sprintf("%s GB/s %sx of its pairs", num(g.Figure), ratio(g.Ratio))
			if g.Failure != "" {
				evidence = g.Failure
			}
			fmt.Fprintf(ew, "named group: %s %s together, its hosts and pairs good: %s\n", strings.Join(g.Hosts, ","), g.Verdict, evidence)
		}
	}
	if r.Ran < r.Slots {
		fmt.Fprintf(ew, "stopped (%s) after %d of the search's %d slots: the pairs and groups of the others were not measured, and are not in this report\n",
			r.Stopped, r.Ran, r.Slots)
	}
	fmt.Fprintf(ew, "searched %d ranks in %d rounds of pairs and %d groups in %v\n", r.Ranks, r.Rounds, len(r.Groups), r.Wall.Round(time.Millisecond))
	return ew.err
}
