package results

import (
	"cmp"
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"time"
)

// SchemaVersion is the version of the CSV columns and JSON fields written by
// CSV and JSONLines. It changes when a column is renamed, removed or changes
// meaning; adding a column does not change it.
const SchemaVersion = 1

// column is one CSV column and JSON field: its name, with the unit in it,
// and its value for record r of run: a string, int64, float64, bool or nil
// (unknown).
type column struct {
	name  string
	value func(run runInfo, r Record) any
}

// columns are the CSV header and the JSON fields, in order. Every row
// carries the run's metadata, so that files from several runs can be
// concatenated and still be told apart.
var columns = []column{
	{"schema_version", func(runInfo, Record) any { return int64(SchemaVersion) }},
	{"run_id", func(run runInfo, _ Record) any { return run.id }},
	{"started", func(run runInfo, _ Record) any { return run.started }},
	{"host", func(run runInfo, _ Record) any { return run.h.Host }},
	{"tool_version", func(run runInfo, _ Record) any { return run.h.Version }},
	{"backend", func(run runInfo, _ Record) any { return run.h.Backend }},
	{"ranks", func(run runInfo, _ Record) any { return known(run.h.Ranks > 0, int64(run.h.Ranks)) }},
	{"algo_requested", func(run runInfo, r Record) any { return cmp.Or(r.AlgoRequested, run.h.Algo) }},
	{"placement_mode", func(run runInfo, _ Record) any { return run.h.Placement }},
	{"link_GBps", func(run runInfo, _ Record) any { return known(run.h.LinkGBps > 0, run.h.LinkGBps) }},
	{"link_source", func(run runInfo, _ Record) any { return run.h.LinkSource }},
	{"op", func(_ runInfo, r Record) any { return r.Op }},
	{"dtype", func(_ runInfo, r Record) any { return r.DType }},
	{"redop", func(_ runInfo, r Record) any { return r.RedOp }},
	{"root", func(_ runInfo, r Record) any { return int64(r.Root) }},
	{"algo", func(_ runInfo, r Record) any { return r.Algo }},
	{"in_place", func(_ runInfo, r Record) any { return r.InPlace }},
	{"size_bytes", func(_ runInfo, r Record) any { return r.Bytes }},
	{"count", func(_ runInfo, r Record) any { return known(r.Count >= 0, r.Count) }},
	{"iters", func(run runInfo, r Record) any { return known(run.ours() || r.Iters > 0, int64(r.Iters)) }},
	{"time_us", func(_ runInfo, r Record) any { return r.TimeUS }},
	{"min_us", func(_ runInfo, r Record) any { return r.MinUS }},
	{"p50_us", func(_ runInfo, r Record) any { return r.P50US }},
	{"p99_us", func(_ runInfo, r Record) any { return r.P99US }},
	{"max_us", func(_ runInfo, r Record) any { return r.MaxUS }},
	{"stddev_us", func(_ runInfo, r Record) any { return r.StdDevUS }},
	{"algbw_GBps", func(_ runInfo, r Record) any { return r.AlgBW }},
	{"busbw_GBps", func(_ runInfo, r Record) any { return r.BusBW }},
	{"util_pct", func(_ runInfo, r Record) any { return known(!math.IsNaN(r.Util), 100*r.Util) }},
	{"wrong", func(_ runInfo, r Record) any { return known(r.Checked(), r.Wrong) }},
	{"run", func(_ runInfo, r Record) any { return int64(r.Run) }},
	{"model_us", func(_ runInfo, r Record) any { return known(r.ModelUS > 0, r.ModelUS) }},
	{"slow_rank", func(_ runInfo, r Record) any { return known(r.SlowRank >= 0, int64(r.SlowRank)) }},
	{"skew", func(_ runInfo, r Record) any { return known(r.Skew >= 1, r.Skew) }},
	{"retries", func(_ runInfo, r Record) any { return int64(r.Retries) }},
	{"group", func(_ runInfo, r Record) any { return r.Group }},
	{"group_size", func(_ runInfo, r Record) any { return int64(r.GroupSize) }},
	{"buckets", func(_ runInfo, r Record) any { return int64(max(r.Buckets, 1)) }},
	{"fusion_speedup", func(_ runInfo, r Record) any { return known(r.FusionSpeedup > 0, r.FusionSpeedup) }},
	// Measured only with --overlap.
	{"compute_us", func(_ runInfo, r Record) any { return known(r.ComputeUS > 0, r.ComputeUS) }},
	{"total_us", func(_ runInfo, r Record) any { return known(r.ComputeUS > 0, r.TotalUS) }},
	{"overlap_eff", func(_ runInfo, r Record) any { return known(r.ComputeUS > 0, r.OverlapEff) }},
	{"topology", func(run runInfo, _ Record) any { return run.h.Topology }},
	{"link_inter_GBps", func(run runInfo, _ Record) any { return known(run.h.LinkInterGBps > 0, run.h.LinkInterGBps) }},
	// Util above 100%: the row's data sat in a cache (Record.FasterThanLink).
	{"faster_than_link", func(_ runInfo, r Record) any { return r.FasterThanLink() }},
	{"cache", func(run runInfo, _ Record) any { return known(run.ours(), cacheName(run.h)) }},
	// When the row's measurement ended, with -S; "run" above is its cycle
	// (-N).
	{"timestamp", func(run runInfo, r Record) any {
		return known(run.h.Timestamps && !r.Ended.IsZero(), r.Ended.Format(TimestampFormat))
	}},
	// The tool that measured the row (hccl-test, or the tool whose log
	// convert read), and what such a log says of a check that it does not
	// count in wrong elements.
	{"source", func(run runInfo, _ Record) any { return cmp.Or(run.h.Source, SourceOurs) }},
	{"check_note", func(_ runInfo, r Record) any { return r.CheckNote }},
	// How each row was measured: -a, -m, -z, -c N, -u, and -C's figure.
	{"average", func(run runInfo, _ Record) any { return known(run.ours(), cmp.Or(run.h.Average, "max")) }},
	{"agg_iters", func(run runInfo, _ Record) any { return known(run.ours(), int64(max(run.h.AggIters, 1))) }},
	{"blocking", func(run runInfo, _ Record) any { return known(run.ours(), int64(run.h.Blocking)) }},
	{"check_iters", func(run runInfo, _ Record) any { return known(run.ours(), int64(checkIters(run.h))) }},
	{"unalign", func(run runInfo, _ Record) any { return known(run.ours(), int64(run.h.Unalign)) }},
	{"cpu_us", func(run runInfo, r Record) any { return known(run.h.CPUTime, r.CPUUS) }},
	// The traffic of a variable-size collective's row (alltoallv, ...).
	{"recv_min_bytes", func(_ runInfo, r Record) any { return known(r.Imbalance > 0, r.RecvMinBytes) }},
	{"recv_mean_bytes", func(_ runInfo, r Record) any { return known(r.Imbalance > 0, r.RecvMeanBytes) }},
	{"recv_max_bytes", func(_ runInfo, r Record) any { return known(r.Imbalance > 0, r.RecvMaxBytes) }},
	{"imbalance", func(_ runInfo, r Record) any { return known(r.Imbalance > 0, r.Imbalance) }},
	{"hot_rank", func(_ runInfo, r Record) any { return known(r.Imbalance > 0, int64(r.HotRank)) }},
}

// checkIters returns the checked runs of each row of the run: 0 without a
// check, else at least 1.
func checkIters(h Header) int {
	if !h.Check {
		return 0
	}
	return max(h.CheckIters, 1)
}

// TimestampFormat is the timestamp column of CSV and JSON (-S): local time
// to the millisecond, with its offset from UTC.
const TimestampFormat = "2006-01-02T15:04:05.000Z07:00"

// TableTimestamp is the table's timestamp column (-S), local time as
// nccl-tests prints it (strftime's %Y-%m-%d %H:%M:%S).
const TableTimestamp = "2006-01-02 15:04:05"

// known returns v if ok, else nil: the value of a field that is unknown
// unless ok (a link bandwidth of 0, a row not checked, a prediction not
// made).
func known(ok bool, v any) any {
	if ok {
		return v
	}
	return nil
}

// columnNames returns the names of columns, in order: the CSV header.
func columnNames() []string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	return names
}

// fieldValues returns one value per column for record r of the run.
// Floats are never NaN or infinite: those become nil. They are rounded to
// 15 significant digits, finer than any measurement's precision, so that
// 100 x 0.1019 reads 10.19, not 10.190000000000001.
func fieldValues(run runInfo, r Record) []any {
	v := make([]any, len(columns))
	for i, c := range columns {
		v[i] = c.value(run, r)
		if f, ok := v[i].(float64); ok {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				v[i] = nil
			} else {
				v[i] = roundSig(f, 15)
			}
		}
	}
	return v
}

// runInfo is what every row repeats about its run.
type runInfo struct {
	h       Header
	id      string
	started string
}

func newRunInfo(h Header) runInfo {
	ri := runInfo{h: h, id: RunID(h)}
	if !h.Started.IsZero() { // a log of another tool may not say when
		ri.started = h.Started.UTC().Format(time.RFC3339)
	}
	return ri
}

// ours reports whether hccl-test measured the run, rather than another
// tool whose log was read: the columns only hccl-test measures are empty
// for the others' rows.
func (ri runInfo) ours() bool { return ri.h.Source == "" || ri.h.Source == SourceOurs }

// RunID names a run in CSV, JSON lines and Go benchmark files: h.RunID
// when set (a log read from a file), else an id derived from when and where
// the run started: the start time in UTC to the millisecond (ISO 8601 basic
// format) and the host, as in "20261129T173012.345Z-node01". Milliseconds,
// not seconds, so that two short runs started one after the other on one
// host do not share an id; every sink derives the same id from the same
// Header.
func RunID(h Header) string {
	if h.RunID != "" {
		return h.RunID
	}
	id := h.Started.UTC().Format("20060102T150405.000Z")
	if h.Host != "" {
		id += "-" + h.Host
	}
	return id
}

// flusher is implemented by buffered writers such as *bufio.Writer.
type flusher interface{ Flush() error }

// flushTo flushes w if it buffers, so that a row written is a row kept even
// if the run is interrupted.
func flushTo(w io.Writer) error {
	if f, ok := w.(flusher); ok {
		return f.Flush()
	}
	return nil
}

// CSV writes records as comma-separated values (RFC 4180, as encoding/csv
// writes them): a header row of column names, then one row per record,
// flushed as soon as it is written. Numbers are plain decimals; an unknown
// value (utilization without a link bandwidth, wrong elements of an
// unchecked row, any NaN) is an empty field. CSV is not safe for
// concurrent use.
type CSV struct {
	w   io.Writer
	cw  *csv.Writer
	run runInfo
	row []string // reused for every row
	err error    // first error; later calls return it
	// header says the header row is written: a second run (Begin again,
	// as convert does for each test of a log) adds only its rows.
	header bool
}

// NewCSV returns a CSV writing to w. If w has a Flush method (a
// *bufio.Writer) it is called after every row.
func NewCSV(w io.Writer) *CSV {
	return &CSV{w: w, cw: csv.NewWriter(w), row: make([]string, len(columns))}
}

// Begin implements Sink: it writes the header row, the first time it is
// called. Called again, for another run, it writes nothing: the rows
// that follow carry that run's metadata.
func (c *CSV) Begin(h Header) error {
	c.run = newRunInfo(h)
	if c.header {
		return c.err
	}
	c.header = true
	return c.writeRow(columnNames())
}

// Write implements Sink: it writes and flushes one row.
func (c *CSV) Write(r Record) error {
	for i, v := range fieldValues(c.run, r) {
		c.row[i] = csvField(v)
	}
	return c.writeRow(c.row)
}

// End implements Sink. The CSV has no footer: a file cut short by an
// interrupted run differs from a finished one only by its missing rows.
func (c *CSV) End(Summary) error { return c.err }

func (c *CSV) writeRow(row []string) error {
	if c.err != nil {
		return c.err
	}
	if err := c.cw.Write(row); err != nil {
		c.err = err
		return err
	}
	c.cw.Flush()
	if c.err = c.cw.Error(); c.err == nil {
		c.err = flushTo(c.w)
	}
	return c.err
}

// csvField formats one value of fieldValues.
func csvField(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		// Never in exponent form.
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	panic("results: csvField: unexpected type") // fieldValues returns only the types above
}

// cacheName returns where the run's data came from: warm or cold.
func cacheName(h Header) string {
	if h.Cache == "" {
		return "warm"
	}
	return h.Cache
}
