package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
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
	// seen counts the measurements of the rows measured more than
	// MaxRuns times; rng picks which are kept.
	seen map[sampleKey]int64
	rng  *rand.Rand
	// dropped counts the lines that did not parse past maxWarnings.
	dropped int
}

type sampleKey struct{ name, unit string }

// MaxRuns is the most measurements Samples keeps of one row in one unit:
// all of them up to that, and then a uniform sample of that many of them
// (Vitter's Algorithm R, seeded alike for every file, so that a file reads
// the same each time). A file of a run without end (-N 0) is read whole
// in the memory of its distinct rows, whatever its length; at MaxRuns a
// side, Compare's statistics have their full power.
const MaxRuns = 1 << 16

func (s *Samples) add(name, unit string, v float64) {
	k := sampleKey{name, unit}
	vals, ok := s.values[k]
	if !ok {
		s.keys = append(s.keys, k)
	}
	if len(vals) < MaxRuns {
		s.values[k] = append(vals, v)
		return
	}
	if s.seen == nil {
		s.seen, s.rng = map[sampleKey]int64{}, rand.New(rand.NewPCG(1, 2))
	}
	seen := s.seen[k] + 1
	if seen == 1 { // the first past MaxRuns
		seen = MaxRuns + 1
	}
	s.seen[k] = seen
	if j := s.rng.Int64N(seen); j < MaxRuns {
		vals[j] = v
	}
}

// Sampled returns the rows, in one unit each, that the file measured more
// than MaxRuns times, and how many times each: Samples keeps a uniform
// sample of MaxRuns of their measurements.
func (s *Samples) Sampled() map[string]int64 {
	m := map[string]int64{}
	for k, n := range s.seen {
		m[k.name+" "+k.unit] = n
	}
	return m
}

// ReadSamples reads the file at path, written by hccl-test --bench (the Go
// benchmark format; any file benchstat reads) or --csv (recognized by its
// header line, which has a schema_version column; see OpenInput), or the
// log of another tool (nccl-tests, rccl-tests, hccl_test, nccom-test; see
// ReadLog), recognized by a row in its first MiB, whose rows are named as
// CSV rows are. CSV rows get the names the Go benchmark lines give them,
// and file configuration is ignored, so the two files of one run read the
// same. CSV columns are found by name, in any order, extra ones ignored,
// and a byte-order mark is skipped. Units are tidied ("ns/op" reads as
// "sec/op"); CSV columns become sec/op (time_us), algbw-GB/s and
// busbw-GB/s, and an empty field is left out.
//
// A benchmark line that does not parse is kept in Samples.Warnings (the
// first maxWarnings of them) and the rest is read; a CSV row that does not
// parse, a value that cannot be what its unit says (see CheckMeasurement),
// or a file without any measurement, is an error naming the path and
// line. The file is read through OpenInput and streamed: a CSV or Go
// benchmark file of any length, in memory that grows with its distinct
// rows (see MaxRuns), not its bytes.
func ReadSamples(path string) (*Samples, error) {
	in, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	s := &Samples{Path: path, values: map[sampleKey][]float64{}}
	switch in.Format {
	case FormatCSV:
		err = s.readCSV(in)
	case FormatLog:
		var data []byte
		if data, err = in.ReadAll(); err == nil {
			s.addLog(data)
		}
	default:
		line := func() int { // where benchfmt's scanner stopped
			if n := longLine(in.Head()); n > 0 {
				return n
			}
			return in.Line()
		}
		err = s.readBench(in, line)
	}
	if ferr := in.Err(); ferr != nil { // stalled, too large, a line too long: what the parser made of it matters less
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
			s.warn(rec)
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
	if s.dropped > 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("%s: and %s more that did not parse", s.Path, Count(s.dropped, "line")))
	}
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

// maxWarnings is the most lines that did not parse that Samples.Warnings
// holds one by one; one more warning counts the rest.
const maxWarnings = 100

// warn keeps e, a line that did not parse, or counts it past maxWarnings.
func (s *Samples) warn(e *benchfmt.SyntaxError) {
	if len(s.Warnings) == maxWarnings {
		s.dropped++
		return
	}
	c := *e
	s.Warnings = append(s.Warnings, &c)
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
// met again sets the columns anew. Rows are kept by what names them, with
// their measurements, not one by one: a file of one row measured a
// million times (-N 0) takes the memory of one row and MaxRuns values.
func (s *Samples) readCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked against the latest header
	cr.Comment = '#'
	cr.ReuseRecord = true
	var col map[string]int // column index by name
	var width int          // fields of the latest header
	var rows csvRows
	for {
		row, err := cr.Read()
		var pe *csv.ParseError
		switch {
		case err == io.EOF:
			rows.addTo(s)
			return nil
		case errors.As(err, &pe):
			return fmt.Errorf("%s:%d: %w", s.Path, pe.Line, pe.Err)
		case err != nil:
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		line, _ := cr.FieldPos(0)
		if isHeader(row) {
			col, width = map[string]int{}, len(row)
			for i, name := range row {
				col[name] = i
			}
			var missing []string
			for _, c := range csvRequired {
				if _, ok := col[c]; !ok {
					missing = append(missing, c)
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("%s:%d: the CSV header has no %s column%s", s.Path, line, strings.Join(missing, ", "),
					map[bool]string{true: "s"}[len(missing) > 1])
			}
			continue
		}
		switch {
		case col == nil:
			err = errors.New("a row before the CSV header (a line with a schema_version column)")
		case len(row) != width:
			err = fmt.Errorf("%d fields, the header has %d", len(row), width)
		default:
			var r csvRow
			r, err = parseCSVRow(func(c string) string {
				if i, ok := col[c]; ok {
					return row[i]
				}
				return "" // a column added after the file was written
			})
			rows.add(r)
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

// csvGroup is the rows of a CSV file that one name and requested
// algorithm name, in one run: their measurements, by unit.
type csvGroup struct {
	run, plain, withAlgo string // the name without and with the requested algorithm
	values               [len(csvUnits)]kept
}

// csvUnits are the units of a CSV row's measurements, in the order
// parseCSVRow gives them.
var csvUnits = [...]string{"sec/op", unitAlgBW, unitBusBW}

// kept are the measurements of one row in one unit, as Samples.add keeps
// them: all up to MaxRuns, then a uniform sample of seen.
type kept struct {
	vals []float64
	seen int64
}

func (k *kept) add(v float64, rng *rand.Rand) {
	if k.seen++; len(k.vals) < MaxRuns {
		k.vals = append(k.vals, v)
	} else if j := rng.Int64N(k.seen); j < MaxRuns {
		k.vals[j] = v
	}
}

// csvRows are a CSV file's rows, as groups in the order of their first row.
type csvRows struct {
	groups []*csvGroup
	index  map[csvName]*csvGroup
	algos  map[string]map[string]bool // requested algorithms by run
	rng    *rand.Rand
}

// csvName is what names a row of a CSV file (see BenchFmt.name), and the
// run and algorithm it was requested with: the fields, not the name
// written out, which is made once a group.
type csvName struct {
	op, dtype, redop, group, backend, run, requested string
	root, buckets, ranks                             int
	bytes                                            int64
	inPlace                                          bool
}

// add adds the measurements of r to its group.
func (rs *csvRows) add(r csvRow) {
	if rs.index == nil {
		rs.index, rs.algos, rs.rng = map[csvName]*csvGroup{}, map[string]map[string]bool{}, rand.New(rand.NewPCG(1, 2))
	}
	k := csvName{op: r.rec.Op, dtype: r.rec.DType, redop: r.rec.RedOp, group: r.rec.Group, backend: r.backend, run: r.run,
		requested: r.requested, root: r.rec.Root, buckets: r.rec.Buckets, ranks: r.ranks, bytes: r.rec.Bytes, inPlace: r.rec.InPlace}
	g := rs.index[k]
	if g == nil {
		name := func(algo string) string {
			rec := r.rec
			rec.AlgoRequested = algo
			return (&BenchFmt{h: Header{Backend: r.backend, Ranks: r.ranks}}).name(rec)
		}
		// The key's fields are cut from the row's line: copies keep
		// only themselves, not every line that made a group.
		for _, f := range []*string{&k.op, &k.dtype, &k.redop, &k.group, &k.backend, &k.run, &k.requested} {
			*f = strings.Clone(*f)
		}
		g = &csvGroup{run: k.run, plain: name(""), withAlgo: name(r.requested)}
		rs.index[k] = g
		rs.groups = append(rs.groups, g)
		if rs.algos[r.run] == nil {
			rs.algos[r.run] = map[string]bool{}
		}
		rs.algos[r.run][r.requested] = true
	}
	for _, v := range r.values {
		g.values[slices.Index(csvUnits[:], v.Unit)].add(v.Value, rs.rng)
	}
}

// addTo adds the measurements of the rows to s. A run whose rows asked
// for several algorithms (--algo auto,ring) names each row with its own,
// as its Go benchmark lines do.
func (rs *csvRows) addTo(s *Samples) {
	for _, g := range rs.groups {
		name := g.plain
		if len(rs.algos[g.run]) > 1 {
			name = g.withAlgo
		}
		for u, k := range g.values {
			for _, v := range k.vals {
				s.add(name, csvUnits[u], v)
			}
			// The group's sample stands for more measurements.
			if k.seen > int64(len(k.vals)) {
				sk := sampleKey{name, csvUnits[u]}
				if s.seen == nil {
					s.seen, s.rng = map[sampleKey]int64{}, rand.New(rand.NewPCG(1, 2))
				}
				s.seen[sk] = max(s.seen[sk], int64(len(s.values[sk]))) + k.seen - int64(len(k.vals))
			}
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
