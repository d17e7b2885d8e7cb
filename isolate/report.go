package isolate

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report for a person: what was compared and by
// which rule, the hosts worst first, every pair, and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if r.Live {
		fmt.Fprintf(ew, "%s %s at %d bytes (the slowest rail of each pair), %d hosts, %d pairs measured live\n",
			r.Op, r.Unit, r.Size, len(r.Hosts), len(r.Pairs))
	} else {
		fmt.Fprintf(ew, "%s %s at %d bytes (the largest size at least half the logs measured), %d hosts, %d pairs, %d logs\n",
			cmp.Or(r.Op, "(the op the logs do not name)"), r.Unit, r.Size, len(r.Hosts), len(r.Pairs), r.Logs)
	}
	fmt.Fprintf(ew, "median of the hosts' medians %s GB/s, MAD of their logarithms %s (x%s); a pair is slow below %s GB/s = min(median / e^(%g MAD), %g x median)\n\n",
		num(r.Median), num(r.MAD), strconv.FormatFloat(math.Exp(r.MAD), 'f', 3, 64), num(r.Threshold), r.Config.K, r.Config.Floor)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\tpairs\tbad\tfailed\tmedian GB/s\tratio\tverdict")
	for _, h := range r.Hosts {
		verdict := "ok"
		if h.Named {
			verdict = "NAMED"
		} else if h.Unexplained > 0 {
			verdict = fmt.Sprintf("%d bad with good hosts", h.Unexplained)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", h.Name, h.Pairs, h.Bad, h.Failed, num(h.Median), ratio(h.Ratio), verdict)
	}
	tw.Flush()
	fmt.Fprintln(ew)
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tGB/s\tratio\tverdict\tevidence")
	for _, p := range r.Pairs {
		verdict := p.Verdict
		if p.Named {
			verdict = strings.ToUpper(verdict) + " (named)"
		}
		fmt.Fprintf(tw, "%s - %s\t%s\t%s\t%s\t%s\n", p.A, p.B, num(p.Figure), ratio(p.Ratio), verdict, strings.Join(p.Failures, "; "))
	}
	tw.Flush()
	fmt.Fprintln(ew)
	hosts, pairs := r.Named()
	if len(hosts) == 0 && len(pairs) == 0 {
		fmt.Fprintln(ew, "named: nothing (no host or pair is slow or failed by the rule)")
		return ew.err
	}
	for i, h := range hosts {
		rest := ""
		if h.Rest < h.Pairs {
			rest = fmt.Sprintf(", %d of %d without those with hosts named before it", h.RestBad, h.Rest)
		}
		fmt.Fprintf(ew, "named host %d: %s, bad with %d of its %d peers%s: %s\n", i+1, h.Name, h.Bad, h.Pairs, rest, strings.Join(h.Evidence, "; "))
	}
	for _, p := range pairs {
		evidence := fmt.Sprintf("%s GB/s %sx", num(p.Figure), ratio(p.Ratio))
		if len(p.Failures) > 0 {
			evidence = strings.Join(p.Failures, "; ")
		}
		fmt.Fprintf(ew, "named pair: %s - %s %s, both hosts good with their other peers: %s\n", p.A, p.B, p.Verdict, evidence)
	}
	return ew.err
}

// CSVHeader is the header of WriteCSV's rows.
var CSVHeader = []string{"host_a", "host_b", "op", "unit", "size_bytes", "GBps", "ratio", "verdict", "named", "logs", "failures"}

// WriteCSV writes a row per pair: its hosts, the figure compared, its
// ratio to the median, the verdict, whether it is named in its own right,
// its logs and why they failed (separated by " | ").
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, p := range r.Pairs {
		cw.Write([]string{p.A, p.B, r.Op, r.Unit, strconv.FormatInt(r.Size, 10), csvNum(p.Figure), csvNum(p.Ratio),
			p.Verdict, strconv.FormatBool(p.Named), strings.Join(p.Logs, " | "), strings.Join(p.Failures, " | ")})
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func csvNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// errWriter keeps the first error of its writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
