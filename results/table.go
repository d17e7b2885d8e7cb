package results

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Table writes the human-readable table on the model of nccl-tests: a header
// of '#' lines, a block of rows per collective with named columns and their
// units, and a footer. With placement "both" an out-of-place and an in-place
// measurement of the same shape share one line, as in nccl-tests.
type Table struct {
	w       io.Writer
	h       Header
	both    bool
	lastOp  string
	pending *Record // out-of-place half of a line waiting for its in-place half
	shown   shownMean
	rows    int // rows shown
	faster  int // of which moved data faster than their link
	// fasterBig counts the faster rows larger than the last-level cache,
	// whose data did not sit in it (Header.aboveCache).
	fasterBig int
	err       error // first write error; later writes are skipped
}

// NewTable returns a Table writing to w. If w has a Flush method (a
// *bufio.Writer) it is called after the header, every row and the footer.
func NewTable(w io.Writer) *Table { return &Table{w: w} }

func (t *Table) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// flush flushes w if it buffers, as the other writers do after every row,
// and returns the first error.
func (t *Table) flush() error {
	if t.err == nil {
		t.err = flushTo(t.w)
	}
	return t.err
}

// Begin implements Sink: it writes the run header.
func (t *Table) Begin(h Header) error {
	t.h, t.both = h, h.Placement == "both"
	check := "off"
	if h.Check {
		check = "on"
	}
	t.printf("# hccl-test %s\n", h.Version)
	t.printf("# backend %s  ranks %d  algo %s  placement %s  check %s  timeout %s\n",
		h.Backend, h.Ranks, h.Algo, h.Placement, check, TimeoutString(h.Timeout))
	if h.Simulated != "" {
		t.printf("# simulated: %s\n", h.Simulated)
	}
	t.printf("# op %s  datatype %s  redop %s\n",
		strings.Join(h.Ops, ","), strings.Join(h.DTypes, ","), strings.Join(h.RedOps, ","))
	if h.BenchTime > 0 {
		t.printf("# sweep %s  iters at least %d and --benchtime %v of timed work a row (each row's count: the CSV's and JSON's iters)  warmup %d\n",
			h.Sweep, h.Iters, h.BenchTime, h.Warmup)
	} else {
		t.printf("# sweep %s  iters %d  warmup %d\n", h.Sweep, h.Iters, h.Warmup)
	}
	if h.Method != "" {
		t.printf("# measured: %s\n", h.Method)
	}
	if cacheName(h) == "cold" {
		t.printf("# cache cold: each row rotates through buffer sets that are together twice the last-level cache, so each iteration's data comes from memory\n")
	}
	switch {
	case h.Cycles && h.Runs == 0:
		t.printf("# cycles: the sweep repeats until interrupted (-N 0), every cycle's rows shown with its number\n")
	case h.Cycles:
		t.printf("# cycles %d: the sweep runs %s (-N), every cycle's rows shown with its number\n", h.Runs, Count(h.Runs, "time"))
	case h.Runs > 1:
		t.printf("# runs %d: the sweep is repeated and each row shows the median of its runs\n", h.Runs)
	}
	if h.Memory != "" {
		t.printf("# memory (estimated, as --dry-run): %s\n", h.Memory)
	}
	if h.Faults != "" {
		t.printf("# faults injected: %s\n", h.Faults)
	}
	if h.Retry != "" {
		t.printf("# retry: %s\n", h.Retry)
	}
	if h.Groups != "" {
		t.printf("# groups %s\n", h.Groups)
	}
	if h.Fusion {
		t.printf("# fusion: a row of b buckets runs b collectives of size/b back to back; fuse(x) = its time over one collective of size\n")
	}
	if h.FusionSkips != "" {
		t.printf("# fusion: %s\n", h.FusionSkips)
	}
	if h.Overlap != "" {
		t.printf("# overlap: %s; eff = (time + compute - total) / min(time, compute)\n", h.Overlap)
	}
	if h.Model != "" {
		t.printf("# model %s\n", h.Model)
	}
	if h.Topology != "" {
		t.printf("# topology %s\n", h.Topology)
	}
	switch {
	case h.LinkGBps > 0 && h.LinkInterGBps > 0:
		t.printf("# link bandwidth inside a server %.2f GB/s (%s), between servers %.2f GB/s (%s)\n",
			h.LinkGBps, h.LinkSource, h.LinkInterGBps, h.LinkInterSource)
	case h.LinkGBps > 0:
		t.printf("# link bandwidth %.2f GB/s (%s)\n", h.LinkGBps, h.LinkSource)
	default:
		t.printf("# link bandwidth unknown: util not computed (see --link-bw)\n")
	}
	if h.LinkRule != "" && h.LinkInterGBps > 0 {
		t.printf("# util: %s\n", h.LinkRule)
	}
	t.explainColumns()
	if h.LinkGBps > 0 {
		t.printf("# %s after util: the row moved data faster than its link (util above 100%%): %s\n", FasterMark, fasterWhyHeader(h))
	}
	if h.LinkUncertain && h.LinkGBps > 0 {
		t.printf("# %s after util: the link's figure is uncertain (its probe's repetitions did not agree, see above): util is only as good as that figure\n", UncertainMark)
	}
	return t.flush()
}

// opHeader writes the heading of op's block: the columns' names and
// units, with --placement both the measurement's twice under
// out-of-place and in-place.
func (t *Table) opHeader(op string) {
	lead, leadUnits := headings(shownColumns(t.h, leadPart))
	lead, leadUnits = "#"+lead[1:], "#"+leadUnits[1:]
	names, units := headings(shownColumns(t.h, measurePart))
	stamp, stampUnits := headings(shownColumns(t.h, trailPart))
	t.printf("#\n# %s\n", op)
	if t.both {
		width := len(names)
		t.printf("#%s%s%s\n", strings.Repeat(" ", len(lead)-1),
			center("out-of-place", width), center("in-place", width))
		t.printf("%s%s%s%s\n#%s%s%s%s\n", lead, names, names, stamp, leadUnits[1:], units, units, stampUnits)
		return
	}
	t.printf("%s%s%s\n#%s%s%s\n", lead, names, stamp, leadUnits[1:], units, stampUnits)
}

func center(s string, width int) string {
	pad := width - len(s)
	if pad <= 0 {
		return s
	}
	return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
}

// Write implements Sink: it writes one row, or holds an out-of-place
// measurement until its in-place half arrives when both are shown.
func (t *Table) Write(r Record) error {
	t.shown.add(r)
	t.rows++
	if r.FasterThanLink() {
		t.faster++
		if t.h.aboveCache(r) {
			t.fasterBig++
		}
	}
	if r.Op != t.lastOp {
		t.flushPending()
		t.opHeader(r.Op)
		t.lastOp = r.Op
	}
	if t.both {
		if !r.InPlace {
			t.flushPending()
			rc := r
			t.pending = &rc
			return t.flush()
		}
		if p := t.pending; p != nil && sameShape(*p, r) {
			t.pending = nil
			t.printf("%s%s%s%s\n", t.lead(*p), t.group(*p), t.group(r), t.stamp(r))
			t.comment(*p)
			t.comment(r)
			return t.flush()
		}
		t.flushPending()
		t.printf("%s%s%s%s\n", t.lead(r), strings.Repeat(" ", len(t.group(r))), t.group(r), t.stamp(r))
		t.comment(r)
		return t.flush()
	}
	t.printf("%s%s%s\n", t.lead(r), t.group(r), t.stamp(r))
	t.comment(r)
	return t.flush()
}

// comment writes r's comment lines (Record.Comment), each made to start
// with "#" if it does not.
func (t *Table) comment(r Record) {
	for _, line := range r.Comment {
		if !strings.HasPrefix(line, "#") {
			line = "# " + line
		}
		t.printf("%s\n", line)
	}
}

func (t *Table) flushPending() {
	if p := t.pending; p != nil {
		t.pending = nil
		stamp := ""
		if t.h.Timestamps { // under the in-place half's column
			stamp = strings.Repeat(" ", len(t.group(*p))) + t.stamp(*p)
		}
		t.printf("%s%s%s\n", t.lead(*p), t.group(*p), stamp)
		t.comment(*p)
	}
}

func sameShape(a, b Record) bool {
	return a.Op == b.Op && a.DType == b.DType && a.RedOp == b.RedOp && a.Root == b.Root && a.Bytes == b.Bytes &&
		a.Group == b.Group && a.Buckets == b.Buckets && a.AlgoRequested == b.AlgoRequested
}

// lead is the cells of r that say what it measured.
func (t *Table) lead(r Record) string { return cells(shownColumns(t.h, leadPart), t.h, r) }

// stamp is r's cells at the end of the line (-S's timestamp), "" without.
func (t *Table) stamp(r Record) string { return cells(shownColumns(t.h, trailPart), t.h, r) }

// group is the cells of r's measurement.
func (t *Table) group(r Record) string { return cells(shownColumns(t.h, measurePart), t.h, r) }

// formatUS prints a time in microseconds in 8 columns, with fewer decimals
// as it grows.
func formatUS(us float64) string {
	switch {
	case us < 1e4:
		return fmt.Sprintf("%8.2f", us)
	case us < 1e6:
		return fmt.Sprintf("%8.1f", us)
	case us < 1e8:
		return fmt.Sprintf("%8.0f", us)
	default:
		return fmt.Sprintf("%8.2e", us)
	}
}

// End implements Sink: it writes the footer.
func (t *Table) End(s Summary) error {
	t.flushPending()
	t.printf("#\n")
	verdict := "OK"
	if s.Wrong > 0 {
		verdict = "FAILED"
	}
	if !t.h.Check {
		t.printf("# wrong elements: not checked (--check 0, or --sim-data=false)\n")
	} else {
		t.printf("# wrong elements: %d %s\n", s.Wrong, verdict)
	}
	if s.Injected > 0 {
		which := fmt.Sprintf("%d are messages", s.Injected)
		if s.Injected == 1 {
			which = "1 is a message"
		}
		t.printf("# of which %s corrupted by --inject in calls the check did not see, one element each\n", which)
	}
	if t.h.Retry != "" {
		t.printf("# re-runs: %s failed on a transport error and ran again\n", Count(s.Retries, "op"))
	}
	t.fasterFooter()
	t.ncclAvgBusBW(s)
	t.avgBusBW()
	if s.Err != nil {
		t.printf("# stopped early after %s: %s\n", Count(s.Rows, "row"), strings.ReplaceAll(s.Err.Error(), "\n", "; "))
	}
	t.printf("#\n")
	return t.flush()
}

// fmtEff formats an overlap efficiency; "-" when it cannot be measured (NaN).
func fmtEff(e float64) string {
	if math.IsNaN(e) {
		return "-"
	}
	return fmt.Sprintf("%.2f", e)
}
