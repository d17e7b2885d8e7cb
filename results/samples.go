package results

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Samples are one file's measurements by row name and unit, as ReadSamples
// reads them: the values of each (name, unit) in file order, one per run.
type Samples struct {
	Path string
	// Warnings are the lines of the file that did not parse, as
	// *benchfmt.SyntaxError naming the path and line; the rest was read.
	Warnings []error

	keys   []sampleKey              // in order of first appearance
	values map[sampleKey][]float64  // in file order
	units  benchfmt.UnitMetadataMap // the file's "Unit" lines; nil for CSV
}

type sampleKey struct{ name, unit string }

func (s *Samples) add(name, unit string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	k := sampleKey{name, unit}
	if _, ok := s.values[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.values[k] = append(s.values[k], v)
}

// ReadSamples reads the file at path, written by hccl-test --bench (the Go
// benchmark format; any file benchstat reads) or --csv (recognized by its
// header line, which starts with "schema_version,"). CSV rows get the names
// the Go benchmark lines give them, and file configuration is ignored, so the
// two files of one run read the same. Units are tidied ("ns/op" reads as
// "sec/op"); CSV columns become sec/op (time_us), algbw-GB/s and busbw-GB/s,
// and an empty field is left out.
//
// A benchmark line that does not parse is kept in Samples.Warnings and the
// rest is read; a CSV row that does not parse, or a file without any
// measurement, is an error naming the path and line.
func ReadSamples(path string) (*Samples, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Samples{Path: path, values: map[sampleKey][]float64{}}
	r := bufio.NewReader(f)
	if head, _ := r.Peek(len("schema_version,")); string(head) == "schema_version," {
		err = s.readCSV(r)
	} else {
		err = s.readBench(r)
	}
	switch {
	case err != nil:
		return nil, err
	case len(s.keys) == 0 && len(s.Warnings) > 0:
		return nil, fmt.Errorf("%w (and no line read as a result)", s.Warnings[0])
	case len(s.keys) == 0:
		return nil, fmt.Errorf("%s: no measurements: neither Go benchmark lines nor hccl-test CSV rows", path)
	}
	return s, nil
}

func (s *Samples) readBench(r io.Reader) error {
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
				s.add(rec.Name.String(), unit, val)
			}
		}
	}
	s.units = br.Units()
	if err := br.Err(); err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	return nil
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
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", s.Path, line, err)
		}
	}
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
			r.values = append(r.values, benchfmt.Value{Value: v * u.scale, Unit: u.unit})
		}
	}
	return r, nil
}
