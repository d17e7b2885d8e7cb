package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/hccl-test/hccl-test/internal/boundedfile"
	"github.com/hccl-test/hccl-test/results/peerlog"
)

// Samples are one file's measurements by row name and unit, as ReadSamples
// reads them: the values of each (name, unit) in file order, one per run.
type Samples struct {
	Path string
	// Source is the tool whose log the file is (nccl-tests, ...; see
	// ReadLog), "" for a file hccl-test wrote. Such a log gives one mean
	// per row and placement, not the runs of a row: see OneMean.
	Source string
	// Warnings are the lines of the file that did not parse, as
	// *benchfmt.SyntaxError naming the path and line; the rest was read.
	Warnings []error

	keys   []sampleKey              // in order of first appearance
	values map[sampleKey][]float64  // in file order
	units  benchfmt.UnitMetadataMap // the file's "Unit" lines; nil for CSV
}

type sampleKey struct{ name, unit string }

// MaxInputBytes is the most ReadSamples, and plot.Load, read of one file:
// about 140,000 rows of CSV. A larger file, or a device or a pipe that goes
// on past it, is refused.
const MaxInputBytes = 64 << 20

func (s *Samples) add(name, unit string, v float64) {
	k := sampleKey{name, unit}
	if _, ok := s.values[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.values[k] = append(s.values[k], v)
}

// ReadSamples reads the file at path, written by hccl-test --bench (the Go
// benchmark format; any file benchstat reads) or --csv (recognized by its
// header line, which starts with "schema_version,"), or the log of another
// tool (nccl-tests, rccl-tests, hccl_test, nccom-test; see ReadLog),
// recognized by a row in its first MiB, whose rows are named as CSV rows
// are. CSV rows get the names
// the Go benchmark lines give them, and file configuration is ignored, so the
// two files of one run read the same. Units are tidied ("ns/op" reads as
// "sec/op"); CSV columns become sec/op (time_us), algbw-GB/s and busbw-GB/s,
// and an empty field is left out.
//
// A benchmark line that does not parse is kept in Samples.Warnings and the
// rest is read; a CSV row that does not parse, a value that cannot be what
// its unit says (see CheckMeasurement), or a file without any measurement, is an
// error naming the path and line. The file is read through boundedfile, at
// most MaxInputBytes of it.
func ReadSamples(path string) (*Samples, error) {
	f, err := boundedfile.Open(path, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Samples{Path: path, values: map[sampleKey][]float64{}}
	// The first bytes tell the format. They are read, not peeked through a
	// bufio.Reader, so that the parsers read f itself and f.Line is the
	// line a benchmark parser stopped on.
	head := make([]byte, len("schema_version,"))
	n, _ := io.ReadFull(f, head)
	r := io.MultiReader(bytes.NewReader(head[:n]), f)
	switch {
	case string(head[:n]) == "schema_version,":
		err = s.readCSV(r)
	default:
		// Another tool's log shows itself in its first lines; the rest
		// of the file is read only then (a Go benchmark file is streamed).
		more := make([]byte, logPeek)
		m, _ := io.ReadFull(f, more)
		head = append(head[:n], more[:m]...)
		if first := head[:bytes.LastIndexByte(head, '\n')+1]; peerlog.Looks(first) || (m < logPeek && peerlog.Looks(head)) {
			var rest []byte
			if rest, err = io.ReadAll(f); err == nil {
				s.addLog(append(head, rest...))
			}
			break
		}
		line := func() int { // where benchfmt's scanner stopped
			if n := longLine(head); n > 0 {
				return n
			}
			return f.Line()
		}
		err = s.readBench(io.MultiReader(bytes.NewReader(head), f), line)
	}
	if ferr := f.Err(); ferr != nil { // too large, or stalled: what the parser made of it matters less
		return nil, ferr
	}
	switch {
	case err != nil:
		return nil, err
	case len(s.keys) == 0 && len(s.Warnings) > 0:
		return nil, fmt.Errorf("%w (and no line read as a result)", s.Warnings[0])
	case len(s.keys) == 0:
		return nil, fmt.Errorf("%s: no measurements: neither Go benchmark lines, hccl-test CSV rows nor rows of nccl-tests, rccl-tests, hccl_test or nccom-test output", path)
	}
	return s, nil
}

// longLine returns the number, from 1, of the first line of data that
// holds bufio.MaxScanTokenSize bytes or more (the last one, cut, too), or
// 0 when none does.
func longLine(data []byte) int {
	n := 0
	for line := range bytes.Lines(data) {
		if n++; len(bytes.TrimSuffix(line, []byte("\n"))) >= bufio.MaxScanTokenSize {
			return n
		}
	}
	return 0
}

// logPeek is how much of a file ReadSamples reads to tell another tool's
// log from a Go benchmark file.
const logPeek = 1 << 20

// addLog adds the rows of another tool's log (see ReadLog), named as CSV
// rows are: a row the log measured again (nccl-tests -N) is one more
// measurement of it.
func (s *Samples) addLog(data []byte) {
	runs, _ := LogRuns(s.Path, data)
	for _, run := range runs {
		s.Source = run.Header.Source
		b := &BenchFmt{h: run.Header}
		for _, r := range run.Records {
			name := b.name(r)
			for _, v := range []benchfmt.Value{{Value: r.TimeUS * 1e-6, Unit: "sec/op"}, {Value: r.AlgBW, Unit: unitAlgBW}, {Value: r.BusBW, Unit: unitBusBW}} {
				if CheckMeasurement(v.Value, v.Unit) == "" {
					s.add(name, v.Unit, v.Value)
				}
			}
		}
	}
}

// readBench reads Go benchmark lines from r; line is the number of the line
// r has reached, for a line too long for benchfmt's scanner.
func (s *Samples) readBench(r io.Reader, line func() int) error {
	br := benchfmt.NewReader(r, s.Path)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			e := *rec
			s.Warnings = append(s.Warnings, &e)
		case *benchfmt.Result:
			for _, v := range rec.Values {
				// The Reader leaves 0 ns/op in ns/op: make it sec/op.
				val, unit := benchunit.Tidy(v.Value, v.Unit)
				if why := CheckMeasurement(val, unit); why != "" {
					_, n := rec.Pos()
					if v.OrigUnit != "" { // as the file gives it, not tidied
						v.Value, v.Unit = v.OrigValue, v.OrigUnit
					}
					return fmt.Errorf("%s:%d: %v %s: %s", s.Path, n, v.Value, v.Unit, why)
				}
				s.add(rec.Name.String(), unit, val)
			}
		}
	}
	s.units = br.Units()
	err := br.Err()
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		// benchfmt's message names the line before the long one.
		return fmt.Errorf("%s:%d: line too long: a Go benchmark line holds at most %d KiB", s.Path, line(), bufio.MaxScanTokenSize>>10)
	case err != nil:
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
}

// CheckMeasurement says why v cannot be a measurement in unit, or "" if it can:
// a time must be positive (the writers never write 0), a bandwidth must
// not be negative, and no value is NaN or infinite. A file with such a
// value is refused rather than compared without it: a gate that drops the
// rows it cannot read passes on what it did not see.
func CheckMeasurement(v float64, unit string) string {
	switch {
	case unit == "sec/op" && !(v > 0 && !math.IsInf(v, 0)):
		return "not a time (want a positive number)"
	case strings.HasSuffix(unit, "GB/s") && !(v >= 0 && !math.IsInf(v, 0)):
		return "not a bandwidth (want a number of at least 0)"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "not a measurement (want a finite number)"
	}
	return ""
}

// csvRequired are the columns that name a row and hold its measurements.
var csvRequired = []string{"schema_version", "op", "dtype", "redop", "root", "in_place",
	"size_bytes", "backend", "ranks", "time_us", "algbw_GBps", "busbw_GBps"}

// readCSV reads the rows of one CSV file or several concatenated: a header
// met again sets the columns anew.
func (s *Samples) readCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked against the latest header
	var col map[string]int  // column index by name
	var header []string
	var rows []csvRow
	for {
		row, err := cr.Read()
		var pe *csv.ParseError
		switch {
		case err == io.EOF:
			s.addCSVRows(rows)
			return nil
		case errors.As(err, &pe):
			return fmt.Errorf("%s:%d: %w", s.Path, pe.Line, pe.Err)
		case err != nil:
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		line, _ := cr.FieldPos(0)
		if row[0] == "schema_version" {
			col, header = map[string]int{}, row
			for i, name := range row {
				col[name] = i
			}
			if i := slices.IndexFunc(csvRequired, func(c string) bool { _, ok := col[c]; return !ok }); i >= 0 {
				return fmt.Errorf("%s:%d: header has no %s column", s.Path, line, csvRequired[i])
			}
			continue
		}
		if len(row) != len(header) {
			err = fmt.Errorf("%d fields, the header has %d", len(row), len(header))
		} else {
			var r csvRow
			r, err = parseCSVRow(func(c string) string {
				if i, ok := col[c]; ok {
					return row[i]
				}
				return "" // a column added after the file was written
			})
			rows = append(rows, r)
			// Rows convert read from another tool's log are one mean
			// each, as the log itself (see Compare's Means).
			if src := get(row, col, "source"); src != "" && src != SourceOurs {
				s.Source = src
			}
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", s.Path, line, err)
		}
	}
}

// get returns the field of row in column c, "" when the header has none.
func get(row []string, col map[string]int, c string) string {
	if i, ok := col[c]; ok && i < len(row) {
		return row[i]
	}
	return ""
}

// csvRow is the part of a CSV row that Samples keeps.
type csvRow struct {
	rec       Record // what names the row, AlgoRequested aside
	backend   string
	ranks     int
	run       string // run_id
	requested string // algo_requested
	values    []benchfmt.Value
}

// addCSVRows adds the measurements of rows. A run whose rows asked for
// several algorithms (--algo auto,ring) names each row with its own, as
// its Go benchmark lines do.
func (s *Samples) addCSVRows(rows []csvRow) {
	algos := map[string]map[string]bool{}
	for _, r := range rows {
		if algos[r.run] == nil {
			algos[r.run] = map[string]bool{}
		}
		algos[r.run][r.requested] = true
	}
	for _, r := range rows {
		if len(algos[r.run]) > 1 {
			r.rec.AlgoRequested = r.requested
		}
		name := (&BenchFmt{h: Header{Backend: r.backend, Ranks: r.ranks}}).name(r.rec)
		for _, v := range r.values {
			s.add(name, v.Unit, v.Value)
		}
	}
}

// parseCSVRow reads the row whose fields get returns.
func parseCSVRow(get func(column string) string) (csvRow, error) {
	if v := get("schema_version"); v != strconv.Itoa(SchemaVersion) {
		return csvRow{}, fmt.Errorf("schema_version %q: this hccl-test reads version %d", v, SchemaVersion)
	}
	var ints [3]int64
	for i, c := range []string{"root", "size_bytes", "ranks"} {
		var err error
		if ints[i], err = strconv.ParseInt(get(c), 10, 64); err != nil {
			return csvRow{}, fmt.Errorf("%s %q is not an integer", c, get(c))
		}
	}
	inPlace, err := strconv.ParseBool(get("in_place"))
	if err != nil {
		return csvRow{}, fmt.Errorf("in_place %q is not true or false", get("in_place"))
	}
	r := csvRow{rec: Record{Op: get("op"), DType: get("dtype"), RedOp: get("redop"),
		Root: int(ints[0]), InPlace: inPlace, Bytes: ints[1], Group: get("group")},
		backend: get("backend"), ranks: int(ints[2]), run: get("run_id"), requested: get("algo_requested")}
	if b := get("buckets"); b != "" { // absent from files written before --fusion
		if r.rec.Buckets, err = strconv.Atoi(b); err != nil {
			return csvRow{}, fmt.Errorf("buckets %q is not an integer", b)
		}
	}
	for _, u := range []struct {
		col, unit string
		scale     float64
	}{{"time_us", "sec/op", 1e-6}, {"algbw_GBps", unitAlgBW, 1}, {"busbw_GBps", unitBusBW, 1}} {
		if f := get(u.col); f != "" { // empty: unknown
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return csvRow{}, fmt.Errorf("%s %q is not a number", u.col, f)
			}
			if why := CheckMeasurement(v*u.scale, u.unit); why != "" {
				return csvRow{}, fmt.Errorf("%s %s: %s", u.col, f, why)
			}
			r.values = append(r.values, benchfmt.Value{Value: v * u.scale, Unit: u.unit})
		}
	}
	return r, nil
}
