package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Samples are one file's measurements by row name and unit, as ReadSamples
// reads them: the values of each (name, unit) in file order, one per run.
type Samples struct {
	Path string
	// Source is the tool whose log the file is (nccl-tests, ...; see
	// ReadLog), "" for a file hccl-test wrote (its -J report too). Such a
	// log gives one mean per row and placement, not the runs of a row:
	// see OneMean.
	Source string
	// Topology is where the ranks of a log's run sat, as the log says
	// (see Header.RankHosts), when every test of the file ran on the same
	// hosts; the zero value otherwise, and for a file hccl-test wrote.
	Topology Topology
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
	// config is each row's file configuration, as of its first
	// measurement (see RowConfig); rows without one are absent.
	config rowConfigs
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
	for i, run := range runs {
		s.Source = strings.TrimPrefix(run.Header.Source, SourceOurs)
		switch {
		case i == 0:
			s.Topology = run.Header.RankHosts
		case !s.Topology.Equal(run.Header.RankHosts):
			s.Topology = Topology{}
		}
		b := &BenchFmt{h: run.Header}
		cfg := headerConfig(run.Header, false)
		for _, r := range run.Records {
			name := b.name(r)
			s.config.set(name, cfg)
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
			s.config.set(rec.Name.String(), rec.Config)
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
