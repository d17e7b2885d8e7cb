package results

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SkewReadable is the share of a row's time that its slowest rank must
// have spent busy (in the op, not waiting on a peer) for the row's skew to
// be read: below it, every rank spent the op in its waits (a receiver
// that moves the bytes inside its wait, as shm's does, counts the copy
// there), what is left is the harness's own few microseconds, and the
// ratio of such leftovers is noise. Record.Skew is 0 (shown as -) then.
const SkewReadable = 0.1

// timeColumn explains the time column: whose iterations it is the mean of
// (-a), and with -m that an iteration is several ops.
func timeColumn(h Header) string {
	ranks := map[string]string{
		"rank0": "rank 0",
		"mean":  "every rank (each iteration's mean over the ranks)",
		"min":   "the fastest rank (whose timed iterations took least in all)",
	}[h.Average]
	if ranks == "" {
		ranks = "the slowest rank (whose timed iterations took longest in all: the op is done when the last rank is done)"
	}
	s := "mean time of one op in us over the timed iterations of " + ranks
	if h.AggIters > 1 {
		s += fmt.Sprintf(", each iteration divided by the %d ops it issued", h.AggIters)
	}
	return s
}

// tableColumn is one column of the table, declared as the CSV's columns
// are (csv.go): everything the table writes of it comes from here.
type tableColumn struct {
	name string // its heading
	unit string // its unit, under the heading: "(us)"; "" for none
	// width is the columns of a cell, the space before it included; a
	// cell's text is right-aligned in it.
	width int
	// head is the columns of its heading and unit, where not width: the
	// headings were laid out by hand before the cells' widths settled, and
	// the table keeps their places.
	head int
	// headShift is how many columns its heading takes from the next
	// column's (group's, one).
	headShift int
	part      tablePart                   // where on a line it is
	shown     func(Header) bool           // whether the table has it; nil: always
	cell      func(Header, Record) string // the text of a row's cell under the run's header (the table right-aligns it)
	note      string                      // the header's line explaining it
	noteOf    func(Header) string         // the note, where it depends on the run
}

// tablePart is where a column is on a line of the table.
type tablePart int

const (
	// leadPart columns say what a row measured: once per line.
	leadPart tablePart = iota
	// measurePart columns are the measurement: once per placement, twice
	// on a line with --placement both (out-of-place, then in-place).
	measurePart
	// trailPart columns come once, at the end of the line.
	trailPart
)

// tableColumns are the table's columns, in their order. A new column is
// one entry here (and one in csv.go's columns): its heading, unit, widths,
// when it is shown, its cell and its line in the header.
var tableColumns = []tableColumn{
	{name: "cycle", width: 7, part: leadPart, shown: func(h Header) bool { return h.Cycles },
		cell: func(_ Header, r Record) string { return strconv.Itoa(r.Run) },
		note: "which run of the repeated sweep (-N) measured the row, from 1: the CSV's and JSON's run"},
	{name: "group", width: 9, headShift: 1, part: leadPart, shown: func(h Header) bool { return h.Group != "" },
		cell: func(_ Header, r Record) string { return fmt.Sprintf("%s/%d", r.Group, r.GroupSize) },
		note: "the domain and its groups' size (tp/4); the row ran in every group of the domain at once"},
	{name: "size", unit: "(B)", width: 12, part: leadPart,
		cell: func(_ Header, r Record) string { return strconv.FormatInt(r.Bytes, 10) },
		note: "bytes per rank, as nccl-tests: allgather and gather the gathered total, reducescatter and scatter the scattered total, alltoall all a rank sends"},
	{name: "count", unit: "(elements)", width: 14, part: leadPart,
		cell: func(_ Header, r Record) string { return strconv.FormatInt(r.Count, 10) },
		note: "elements in size"},
	{name: "type", width: 10, part: leadPart, cell: func(_ Header, r Record) string { return r.DType },
		note: "the data type"},
	{name: "redop", width: 8, part: leadPart, cell: func(_ Header, r Record) string { return r.RedOp },
		note: "the reduction; none for collectives that do not reduce"},
	{name: "root", width: 6, part: leadPart, cell: func(_ Header, r Record) string { return strconv.Itoa(r.Root) },
		note: "the root rank; -1 for collectives without one"},
	{name: "algo", width: 14, part: leadPart, cell: algoCell,
		note: "the algorithm that ran; auto:NAME where auto chose NAME among the algorithms asked for"},
	{name: "time", unit: "(us)", width: 10, part: measurePart, cell: func(_ Header, r Record) string { return formatUS(r.TimeUS) },
		noteOf: timeColumn},
	{name: "algbw", unit: "(GB/s)", width: 8, part: measurePart, cell: func(_ Header, r Record) string { return fmt.Sprintf("%.2f", r.AlgBW) },
		note: "size / time, in GB/s (1 GB = 1e9 bytes)"},
	{name: "busbw", unit: "(GB/s)", width: 8, part: measurePart, cell: func(_ Header, r Record) string { return fmt.Sprintf("%.2f", r.BusBW) },
		note: "algbw x the bus factor (allreduce 2(n-1)/n; allgather, reducescatter, alltoall, gather, scatter (n-1)/n; others 1), comparable with a link's bandwidth"},
	{name: "util", unit: "(%)", width: 9, head: 7, part: measurePart, cell: utilCell,
		note: "busbw / link bandwidth, in %; - when no link bandwidth is known; " + FasterMark + " after it: above 100%, the row moved data faster than its link (see below)"},
	{name: "#wrong", width: 7, head: 8, part: measurePart, cell: wrongCell,
		note: "elements that differ from the expected result, checked outside the timed iterations; N/A when not checked"},
	{name: "slow", unit: "rank", width: 6, part: measurePart, cell: func(_ Header, r Record) string { return orDash(r.SlowRank >= 0, "%.0f", float64(r.SlowRank)) },
		note: "the rank with the most busy time (time in the op not spent waiting on a peer, over the timed iterations): the one the others waited for, a straggler only where skew is shown; " +
			"for alltoallv, allgatherv and reducescatterv the rank whose receives completed last (the hot receiver of a skewed traffic); - where no rank's time was measured (--algo native: the library's call has no waits of ours)"},
	{name: "skew", unit: "(x)", width: 8, head: 7, part: measurePart, cell: skewCell,
		note: fmt.Sprintf("slow's busy time (of the v collectives: time to the last receive) over the least busy rank's: a few when healthy, large with a slow rank or link; "+
			"- where slow was busy under %.0f%% of the time (the ranks spent it in waits, as on shm, whose receivers copy inside theirs: the ratio of the rest is noise)", 100*SkewReadable)},
	{name: "imbal", unit: "(x)", width: 7, part: measurePart, shown: routed,
		cell: func(_ Header, r Record) string { return orDash(r.Imbalance > 0, "%.2f", r.Imbalance) },
		note: "of alltoallv, allgatherv and reducescatterv: the most bytes a rank received over the mean (1: even), the mean over the row's draws of --traffic; - for the other collectives"},
	{name: "hot", unit: "rank", width: 6, part: measurePart, shown: routed,
		cell: func(_ Header, r Record) string { return orDash(r.Imbalance > 0, "%.0f", float64(r.HotRank)) },
		note: "the rank that received most bytes over the row's draws; compare with slow"},
	{name: "cputime", unit: "(us)", width: 10, part: measurePart, shown: func(h Header) bool { return h.CPUTime },
		cell: func(_ Header, r Record) string { return formatUS(r.CPUUS) },
		note: "the process's CPU time (user+system) per op in us over the timed iterations, its share per rank it hosts, combined over the ranks as time is"},
	{name: "retry", width: 7, part: measurePart, shown: func(h Header) bool { return h.Retry != "" },
		cell: func(_ Header, r Record) string { return strconv.Itoa(r.Retries) },
		note: "calls of the row (warm-up, timed, checked) that failed on a transport error and were run again"},
	{name: "buckets", width: 9, part: measurePart, shown: fused,
		cell: func(_ Header, r Record) string { return strconv.Itoa(max(r.Buckets, 1)) },
		note: "one iteration ran this many collectives of size/buckets back to back"},
	{name: "fuse", unit: "(x)", width: 8, head: 6, part: measurePart, shown: fused,
		cell: func(_ Header, r Record) string { return orDash(r.FusionSpeedup > 0, "%.2f", r.FusionSpeedup) },
		note: "the row's time over the time of one collective of size (the 1-bucket row, which shows -): what fusing gains"},
	{name: "compute", unit: "(us)", width: 10, part: measurePart, shown: overlapped,
		cell: func(_ Header, r Record) string { return usOrDash(r.ComputeUS > 0, r.ComputeUS) },
		note: "the synthetic compute of an iteration, in us, timed alone"},
	{name: "total", unit: "(us)", width: 10, part: measurePart, shown: overlapped,
		cell: func(_ Header, r Record) string { return usOrDash(r.ComputeUS > 0, r.TotalUS) },
		note: "mean time of an iteration overlapped with the compute, in us, slowest rank counting"},
	{name: "eff", width: 7, part: measurePart, shown: overlapped,
		cell: func(_ Header, r Record) string {
			if r.ComputeUS > 0 {
				return fmtEff(r.OverlapEff)
			}
			return "-"
		},
		note: "(time + compute - total) / min(time, compute): 1 when the shorter one was hidden entirely, 0 when nothing was"},
	{name: "min", unit: "(us)", width: 10, part: measurePart, shown: withStats, cell: func(_ Header, r Record) string { return formatUS(r.MinUS) },
		note: "the fastest timed iteration, in us, of the iterations time is the mean of"},
	{name: "p50", unit: "(us)", width: 10, part: measurePart, shown: withStats, cell: func(_ Header, r Record) string { return formatUS(r.P50US) },
		note: "the median iteration, in us"},
	{name: "p99", unit: "(us)", width: 10, part: measurePart, shown: withStats, cell: func(_ Header, r Record) string { return formatUS(r.P99US) },
		note: "the 99th percentile iteration, in us"},
	{name: "max", unit: "(us)", width: 10, part: measurePart, shown: withStats, cell: func(_ Header, r Record) string { return formatUS(r.MaxUS) },
		note: "the slowest iteration, in us"},
	{name: "stddev", unit: "(us)", width: 10, part: measurePart, shown: withStats, cell: func(_ Header, r Record) string { return formatUS(r.StdDevUS) },
		note: "the iterations' standard deviation, in us"},
	{name: "model", unit: "(us)", width: 10, part: measurePart, shown: withStats,
		cell: func(_ Header, r Record) string { return usOrDash(r.ModelUS > 0, r.ModelUS) },
		note: "the cost model's prediction for the algorithm that ran, in us; - where none"},
	{name: "timestamp", unit: "(local time)", width: 21, part: trailPart, shown: func(h Header) bool { return h.Timestamps },
		cell: func(_ Header, r Record) string { return r.Ended.Format(TableTimestamp) },
		note: "when the row's measurement ended, local time (-S); the CSV's and JSON's timestamp"},
}

// When the optional columns are shown.
func fused(h Header) bool      { return h.Fusion }
func overlapped(h Header) bool { return h.Overlap != "" }
func withStats(h Header) bool  { return h.Stats }
func routed(h Header) bool     { return h.Traffic != "" }

// algoCell is the algorithm that ran; auto:NAME where several were asked
// for and auto chose NAME.
func algoCell(_ Header, r Record) string {
	if r.AlgoRequested == "auto" {
		return "auto:" + r.Algo
	}
	return r.Algo
}

// utilCell is the row's util in %, - when unknown, and its mark: the row
// moved data faster than its link, or the link's figure is uncertain.
func utilCell(h Header, r Record) string {
	if math.IsNaN(r.Util) {
		return "- "
	}
	mark := " "
	switch {
	case r.FasterThanLink():
		mark = FasterMark
	case h.LinkUncertain:
		mark = UncertainMark
	}
	return fmt.Sprintf("%.1f%s", 100*r.Util, mark)
}

// wrongCell is the row's wrong elements, N/A when not checked.
func wrongCell(_ Header, r Record) string {
	if r.Checked() {
		return strconv.FormatInt(r.Wrong, 10)
	}
	return "N/A"
}

// skewCell is the row's skew, - where it could not be read.
func skewCell(_ Header, r Record) string { return orDash(r.Skew >= 1, "%.1f", min(r.Skew, 9999)) }

// orDash formats v by format when known, else "-".
func orDash(known bool, format string, v float64) string {
	if !known {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// usOrDash formats a time in us as formatUS when known, else "-".
func usOrDash(known bool, us float64) string {
	if !known {
		return "-"
	}
	return formatUS(us)
}

// shownColumns returns the columns the table shows under h, of part (all
// parts: -1), in their order.
func shownColumns(h Header, part tablePart) []tableColumn {
	var cs []tableColumn
	for _, c := range tableColumns {
		if (part < 0 || c.part == part) && (c.shown == nil || c.shown(h)) {
			cs = append(cs, c)
		}
	}
	return cs
}

// explanation is c's line in the header under h.
func (c tableColumn) explanation(h Header) string {
	if c.noteOf != nil {
		return c.noteOf(h)
	}
	return c.note
}

// headings returns the heading line and the unit line of cs: each heading
// and unit right-aligned in its column's head (or width), a heading with a
// headShift taking that many columns from the next one's.
func headings(cs []tableColumn) (names, units string) {
	var nb, ub strings.Builder
	taken := 0
	for _, c := range cs {
		w := cmp.Or(c.head, c.width) + c.headShift - taken
		taken = c.headShift
		fmt.Fprintf(&nb, "%*s", w, c.name)
		fmt.Fprintf(&ub, "%*s", w, c.unit)
	}
	return nb.String(), ub.String()
}

// cells returns r's cells in cs under h, each right-aligned in its width.
func cells(cs []tableColumn, h Header, r Record) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%*s", c.width, c.cell(h, r))
	}
	return b.String()
}

// explainColumns writes the header's block that explains every column the
// table shows, one line each.
func (t *Table) explainColumns() {
	t.printf("# columns:\n")
	if t.both {
		t.printf("#   out-of-place, in-place: each line shows a size twice, with separate buffers and with the output written over the input\n")
	}
	for _, c := range shownColumns(t.h, -1) {
		t.printf("#   %s: %s\n", c.name, c.explanation(t.h))
	}
}
