package results

import (
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

// columns are the CSV header and the JSON field names, in order, with units
// in the names. Every row carries the run's metadata, so that files from
// several runs can be concatenated and still be told apart.
var columns = []string{
	"schema_version", "run_id", "started", "host", "tool_version", "backend", "ranks",
	"algo_requested", "placement_mode", "link_GBps", "link_source",
	"op", "dtype", "redop", "root", "algo", "in_place", "size_bytes", "count", "iters",
	"time_us", "min_us", "p50_us", "p99_us", "max_us", "stddev_us",
	"algbw_GBps", "busbw_GBps", "util_pct", "wrong", "run", "model_us", "slow_rank", "skew",
	"retries", "group", "group_size", "buckets", "fusion_speedup", "compute_us", "total_us", "overlap_eff",
	"topology", "link_inter_GBps",
}

// fieldValues returns one value per column for record r of the run: a string,
// int64, float64, bool or nil (unknown). Floats are never NaN or infinite:
// those become nil. They are rounded to 15 significant digits, finer than any
// measurement's precision, so that 100 x 0.1019 reads 10.19, not
// 10.190000000000001.
func fieldValues(run runInfo, r Record) []any {
	var util any // unknown unless a link bandwidth was known
	if !math.IsNaN(r.Util) {
		util = 100 * r.Util
	}
	var wrong any // unknown unless checked
	if r.Checked() {
		wrong = r.Wrong
	}
	var model any // Record.ModelUS is 0 when no prediction was made
	if r.ModelUS > 0 {
		model = r.ModelUS
	}
	var skew any // Record.Skew is 0 when the ranks were not compared
	if r.Skew >= 1 {
		skew = r.Skew
	}
	var speedup any // Record.FusionSpeedup is 0 when not measured
	if r.FusionSpeedup > 0 {
		speedup = r.FusionSpeedup
	}
	var compute, total, eff any // measured only with --overlap
	if r.ComputeUS > 0 {
		compute, total, eff = r.ComputeUS, r.TotalUS, r.OverlapEff
	}
	var inter any // Header.LinkInterGBps is 0 when not given
	if run.h.LinkInterGBps > 0 {
		inter = run.h.LinkInterGBps
	}
	requested := run.h.Algo
	if r.AlgoRequested != "" {
		requested = r.AlgoRequested
	}
	var link any // Header.LinkGBps is 0 when unknown
	if run.h.LinkGBps > 0 {
		link = run.h.LinkGBps
	}
	v := []any{
		int64(SchemaVersion), run.id, run.started, run.h.Host, run.h.Version, run.h.Backend, int64(run.h.Ranks),
		requested, run.h.Placement, link, run.h.LinkSource,
		r.Op, r.DType, r.RedOp, int64(r.Root), r.Algo, r.InPlace, r.Bytes, r.Count, int64(r.Iters),
		r.TimeUS, r.MinUS, r.P50US, r.P99US, r.MaxUS, r.StdDevUS,
		r.AlgBW, r.BusBW, util, wrong, int64(r.Run), model, int64(r.SlowRank), skew,
		int64(r.Retries), r.Group, int64(r.GroupSize), int64(max(r.Buckets, 1)), speedup, compute, total, eff,
		run.h.Topology, inter,
	}
	for i, x := range v {
		if f, ok := x.(float64); ok {
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
	return runInfo{h: h, id: RunID(h), started: h.Started.UTC().Format(time.RFC3339)}
}

// RunID names a run in CSV, JSON lines and Go benchmark files. A Header has
// no identifier of its own, so the id is derived from when and where the
// run started: the start time in UTC to the millisecond (ISO 8601 basic
// format) and the host, as in "20261129T173012.345Z-node01". Milliseconds,
// not seconds, so that two short runs started one after the other on one
// host do not share an id; every sink derives the same id from the same
// Header.
func RunID(h Header) string {
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
}

// NewCSV returns a CSV writing to w. If w has a Flush method (a
// *bufio.Writer) it is called after every row.
func NewCSV(w io.Writer) *CSV {
	return &CSV{w: w, cw: csv.NewWriter(w), row: make([]string, len(columns))}
}

// Begin implements Sink: it writes the header row.
func (c *CSV) Begin(h Header) error {
	c.run = newRunInfo(h)
	return c.writeRow(columns)
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
