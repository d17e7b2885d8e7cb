package results

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/internal/boundedfile"
	"github.com/hccl-test/hccl-test/results/peerlog"
)

// SourceOurs is the source of the rows hccl-test measures itself: the
// source column of its CSV and JSON lines. Rows read from another tool's
// log (ReadLog) carry that tool's name: nccl-tests, rccl-tests, hccl_test,
// nccom-test.
const SourceOurs = "hccl-test"

// LogRun is one test of a log of another tool (nccl-tests, rccl-tests,
// hccl_test, nccom-test), as records: what the log says of it in the
// header, and a record per measured row and placement. A figure the log
// does not give is NaN in the records (an empty field in CSV, null in
// JSON); Wrong is -1 where the log gives no count of wrong elements, and
// CheckNote says what it gives instead.
type LogRun struct {
	Header  Header
	Records []Record
	test    int // the log's number of the test, from 1
}

// LogOptions are what a user says of a log that the log may not say
// itself (convert's --op and --ranks). The zero value adds nothing.
type LogOptions struct {
	// Op is the collective the log measured, in hccl-test's names
	// (allreduce, ...): for the tests whose log does not name theirs.
	// "" takes it from the file's name where the log does not say it
	// (see peerlog.OpFromName).
	Op string
	// Ranks is the ranks of the run, for the tests whose log does not say
	// how many; 0 for none.
	Ranks int
}

// ErrNoOp is the error of ReadLog for a log that does not say which
// collective it measured, whose file's name does not say it either.
var ErrNoOp = errors.New("which collective the log measured is not known")

// ReadLog reads the log at path, through boundedfile and at most
// MaxInputBytes of it, and returns its tests in the order they appear,
// completed by opt. A log without a single row read, a test whose
// collective is not known (errors.Is ErrNoOp), and an option that the log
// contradicts, are errors that name the path.
func ReadLog(path string, opt LogOptions) ([]LogRun, error) {
	// Every line is bounded as OpenInput bounds the first: a longer one
	// ends the read where it passes the bound (a 60 MB line took 11 s to
	// parse, to find no rows).
	f, err := boundedfile.Open(path, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	f.SetMaxLine(MaxLineBytes)
	data, err := f.ReadAll()
	if le := (*boundedfile.LineError)(nil); errors.As(err, &le) {
		return nil, fmt.Errorf("%w: no line of nccl-tests, rccl-tests, hccl_test or nccom-test output is that long", err)
	}
	if err != nil {
		return nil, err
	}
	runs, lines, err := readLogRuns(path, data, opt)
	switch {
	case err != nil:
		return nil, err
	case len(runs) == 0:
		return nil, fmt.Errorf("%s: no rows of nccl-tests, rccl-tests, hccl_test or nccom-test output in its %s", path, Count(lines, "line"))
	}
	for _, run := range runs {
		if len(run.Header.Ops) == 0 {
			return nil, fmt.Errorf("%s: %w: neither the log (no \"# Collective test starting\" line, no program name) "+
				"nor the file's name says it; give it with --op (--op allreduce)", path, ErrNoOp)
		}
	}
	return runs, nil
}

// LogRuns turns the content of a log, read from the file named name, into
// runs, one per test of the file; lines is the number of lines read. A
// run's id (Header.RunID) is the file's base name and the test's number,
// "before.log#1". A row measured again in the same test (nccl-tests -N,
// rccl-tests' cycles) is a further run of it (Record.Run 2, 3, ...). A
// test whose log does not name its collective takes the one the file's
// name names, if any (all_reduce_perf.log); a row without bus bandwidth
// gets ours, algbw times coll's bus factor (nccl-tests' definition), where
// its collective and ranks are known.
func LogRuns(name string, data []byte) (runs []LogRun, lines int) {
	runs, lines, _ = readLogRuns(name, data, LogOptions{})
	return runs, lines
}

// readLogRuns is LogRuns completed by opt.
func readLogRuns(name string, data []byte, opt LogOptions) (runs []LogRun, lines int, err error) {
	log := peerlog.Parse(data)
	fromName := peerlog.OpFromName(filepath.Base(name))
	seen := map[Key]int{}
	for _, row := range log.Rows {
		if row, err = completeRow(row, opt, fromName); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %w", name, row.Line, err)
		}
		if len(runs) == 0 || runs[len(runs)-1].test != row.Segment || runs[len(runs)-1].Header.Source != row.Tool {
			h := Header{Source: row.Tool, Backend: cmp.Or(row.Backend, peerlog.Library(row.Tool)), Ranks: row.Ranks, Host: row.Host,
				Iters: row.Iters, RunID: fmt.Sprintf("%s#%d", filepath.Base(name), row.Segment)}
			if i := row.Segment - 1; i < len(log.Segments) {
				h.RankHosts = TopologyOf(log.Segments[i].Hosts)
				if h.RankHosts.Known() {
					h.Topology = h.RankHosts.String() + " (from the log's rank lines)"
				}
			}
			runs = append(runs, LogRun{test: row.Segment, Header: h})
			clear(seen)
		}
		run := &runs[len(runs)-1]
		rec := logRecord(row)
		seen[rec.Key()]++
		rec.Run = seen[rec.Key()]
		run.Records = append(run.Records, rec)
		run.Header.note(rec, row)
	}
	return runs, log.Lines, nil
}

// completeRow fills in what row's log does not say from opt and the
// collective the file's name names (fromName), and refuses an option
// that the log contradicts.
func completeRow(row peerlog.Row, opt LogOptions, fromName string) (peerlog.Row, error) {
	switch {
	case row.Op == "":
		row.Op = cmp.Or(opt.Op, fromName)
	case opt.Op != "" && opt.Op != row.Op:
		return row, fmt.Errorf("--op %s: the log says its test is %s", opt.Op, row.Op)
	}
	switch {
	case row.Ranks == 0:
		row.Ranks = opt.Ranks
	case opt.Ranks != 0 && opt.Ranks != row.Ranks:
		return row, fmt.Errorf("--ranks %d: the log says its test ran on %d", opt.Ranks, row.Ranks)
	}
	return row, nil
}

// busFactor returns coll's bus factor of the collective named op on n
// ranks (coll is the one place that defines them), and whether op names a
// collective coll knows.
func busFactor(op string, n int) (float64, bool) {
	o, err := coll.ParseOp(op)
	if err != nil {
		return 0, false
	}
	return o.BusFactor(n), true
}

// note adds what rec says of its run to h.
func (h *Header) note(rec Record, row peerlog.Row) {
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	add(&h.Ops, rec.Op)
	add(&h.DTypes, rec.DType)
	add(&h.RedOps, rec.RedOp)
	if rec.Checked() {
		h.Check = true
	}
	h.Runs = max(h.Runs, rec.Run)
	place := "out"
	if rec.InPlace {
		place = "in"
	}
	switch {
	case row.Known&peerlog.KnowPlace == 0:
	case h.Placement == "":
		h.Placement = place
	case h.Placement != place:
		h.Placement = "both"
	}
	if h.Ranks == 0 {
		h.Ranks = row.Ranks
	}
	if h.Host == "" {
		h.Host = row.Host
	}
}

// logRecord makes a record of a row of a log. A row without bus
// bandwidth (hccl_test's) gets algbw times the bus factor where its
// collective and ranks are known.
func logRecord(row peerlog.Row) Record {
	nan := math.NaN()
	figure := func(known int, v float64) float64 {
		if row.Known&known == 0 {
			return nan
		}
		return v
	}
	r := Record{
		Op: row.Op, DType: row.DType, RedOp: row.RedOp, Root: -1, InPlace: row.InPlace,
		Bytes: row.Bytes, Count: row.Count, Buckets: 1,
		TimeUS: figure(peerlog.KnowTime, row.TimeUS), AlgBW: figure(peerlog.KnowAlgBW, row.AlgBW),
		BusBW: figure(peerlog.KnowBusBW, row.BusBW), Util: nan,
		MinUS: figure(peerlog.KnowMin, row.MinUS), MaxUS: figure(peerlog.KnowMax, row.MaxUS),
		P99US: figure(peerlog.KnowP99, row.P99US), P50US: nan, StdDevUS: nan, ModelUS: 0,
		Wrong: row.Wrong, CheckNote: row.Check, SlowRank: -1,
	}
	r.Iters = row.Iters
	if row.Known&peerlog.KnowRoot != 0 {
		r.Root = row.Root
	}
	if row.Known&(peerlog.KnowBusBW|peerlog.KnowAlgBW) == peerlog.KnowAlgBW && row.Op != "" && row.Ranks > 0 {
		if f, ok := busFactor(row.Op, row.Ranks); ok {
			r.BusBW = row.AlgBW * f
		}
	}
	if row.Known&peerlog.KnowCount == 0 {
		r.Count = -1
	}
	return r
}
