package results

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

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

// ReadLog reads the log at path, through boundedfile and at most
// MaxInputBytes of it, and returns its tests in the order they appear.
// A log without a single row read is an error that names the path and the
// lines read.
func ReadLog(path string) ([]LogRun, error) {
	data, err := boundedfile.ReadFile(path, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	runs, lines := LogRuns(path, data)
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no rows of nccl-tests, rccl-tests, hccl_test or nccom-test output in its %s", path, Count(lines, "line"))
	}
	return runs, nil
}

// LogRuns turns the content of a log, read from the file named name, into
// runs, one per test of the file; lines is the number of lines read. A
// run's id (Header.RunID) is the file's base name and the test's number,
// "before.log#1". A row measured again in the same test (nccl-tests -N,
// rccl-tests' cycles) is a further run of it (Record.Run 2, 3, ...).
func LogRuns(name string, data []byte) (runs []LogRun, lines int) {
	log := peerlog.Parse(data)
	seen := map[Key]int{}
	for _, row := range log.Rows {
		if len(runs) == 0 || runs[len(runs)-1].test != row.Segment || runs[len(runs)-1].Header.Source != row.Tool {
			runs = append(runs, LogRun{test: row.Segment, Header: Header{
				Source: row.Tool, Backend: peerlog.Library(row.Tool), Ranks: row.Ranks, Host: row.Host,
				RunID: fmt.Sprintf("%s#%d", filepath.Base(name), row.Segment),
			}})
			clear(seen)
		}
		run := &runs[len(runs)-1]
		rec := logRecord(row)
		seen[rec.Key()]++
		rec.Run = seen[rec.Key()]
		run.Records = append(run.Records, rec)
		run.Header.note(rec, row)
	}
	return runs, log.Lines
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

// logRecord makes a record of a row of a log.
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
	if row.Known&peerlog.KnowRoot != 0 {
		r.Root = row.Root
	}
	if row.Known&peerlog.KnowCount == 0 {
		r.Count = -1
	}
	return r
}
