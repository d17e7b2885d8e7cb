package plot

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
	"github.com/hccl-test/hccl-test/results"
)

// ErrNoData is returned, wrapped, by Load for a file holding no rows to plot
// (an empty file, or only headers and comments) and by Write for empty Data.
var ErrNoData = errors.New("no rows to plot")

// sample is one measured row as read from a file; NaN is unknown.
type sample struct {
	key    Key
	bytes  int64
	timeUS float64
	busBW  float64
}

// loader accumulates the rows of several files.
type loader struct {
	samples []sample
	links   []float64 // every link bandwidth seen, one per CSV row that had one
}

// Load reads one or more files written by hccl-test with --csv or --bench,
// telling the two apart by their content, and groups their rows into series
// by Key. Rows of one Key and size, from one file or several (a sweep
// repeated with --runs, or files concatenated or listed together), make
// one Point holding the medians of their times and bandwidths. Rows of
// size 0 are left out: a log axis has no place for them.
//
// Data.LinkGBps is the link bandwidth of the CSV rows (Go benchmark files
// carry it only in a comment, rounded, and are not consulted); it is 0 when
// no row gives one or when rows give different ones.
func Load(paths ...string) (*Data, error) {
	if len(paths) == 0 {
		return nil, errors.New("plot: no files to load")
	}
	var l loader
	for _, p := range paths {
		if err := l.loadFile(p); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	}
	d := group(l.samples)
	if !slices.ContainsFunc(d.Series, func(s Series) bool {
		return slices.ContainsFunc(s.Points, func(p Point) bool { return !math.IsNaN(p.TimeUS) || !math.IsNaN(p.BusBW) })
	}) {
		return nil, fmt.Errorf("plot: %s: no row has a time or a bus bandwidth: %w", strings.Join(paths, ", "), ErrNoData)
	}
	if len(l.links) > 0 && !slices.ContainsFunc(l.links, func(v float64) bool { return v != l.links[0] }) {
		d.LinkGBps = l.links[0]
	}
	return d, nil
}

// loadFile reads one file, at most results.MaxInputBytes of it, whatever
// it is (see boundedfile).
func (l *loader) loadFile(path string) error {
	data, err := boundedfile.ReadFile(path, results.MaxInputBytes)
	if err != nil {
		return err // it names the file
	}
	if err := l.load(data, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// load reads the content of one file, named name, detecting its format
// from its first line that is neither blank nor a comment.
func (l *loader) load(data []byte, name string) error {
	before := len(l.samples)
	switch first := firstLine(data); {
	case first == "":
		return fmt.Errorf("file is empty: %w", ErrNoData)
	case strings.HasPrefix(first, "schema_version,"):
		if err := l.readCSV(data); err != nil {
			return err
		}
		if len(l.samples) == before {
			return fmt.Errorf("CSV without rows: %w", ErrNoData)
		}
	case strings.HasPrefix(first, "{"):
		return errors.New("looks like JSON lines; plot reads the files of --csv or --bench")
	default:
		if err := l.readBench(data, name); err != nil {
			return err
		}
		if len(l.samples) == before {
			return fmt.Errorf("no hccl-test rows in CSV or Go benchmark format: %w", ErrNoData)
		}
	}
	return nil
}

// firstLine returns the first line of data that is neither blank nor a
// '#' comment, trimmed, and cut to 64 bytes, which tell the format: a
// line of a whole file's length is not copied.
func firstLine(data []byte) string {
	for line := range bytes.Lines(data) {
		if s := bytes.TrimSpace(line); len(s) > 0 && s[0] != '#' {
			return string(s[:min(len(s), 64)])
		}
	}
	return ""
}

// readCSV reads the rows of a CSV file. Columns are found by name, so a file
// with columns added or reordered reads the same; a header row repeated
// further down (files concatenated with cat) is read as a header again.
func (l *loader) readCSV(data []byte) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	var col map[string]int
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(row) > 0 && row[0] == "schema_version" {
			col = map[string]int{}
			for i, name := range row {
				col[name] = i
			}
			for _, need := range []string{"op", "size_bytes", "time_us", "busbw_GBps"} {
				if _, ok := col[need]; !ok {
					return fmt.Errorf("CSV header has no %s column", need)
				}
			}
			continue
		}
		if col == nil {
			return errors.New("CSV has no header row")
		}
		field := func(name string) string {
			if i, ok := col[name]; ok && i < len(row) {
				return row[i]
			}
			return ""
		}
		pos, _ := r.FieldPos(0)
		s, link, err := csvSample(field)
		if err != nil {
			return fmt.Errorf("CSV line %d: %w", pos, err)
		}
		if s.bytes > 0 {
			l.samples = append(l.samples, s)
		}
		if link > 0 {
			l.links = append(l.links, link)
		}
	}
}

// csvSample makes a sample of one CSV row, and returns the row's link
// bandwidth, 0 when not given.
func csvSample(field func(string) string) (sample, float64, error) {
	s := sample{key: Key{
		Op: field("op"), DType: field("dtype"), RedOp: field("redop"),
		Backend: field("backend"), Algo: field("algo_requested"),
		InPlace: field("in_place") == "true",
	}}
	if s.key.Algo == "" { // a file without algo_requested
		s.key.Algo = field("algo")
	}
	var err error
	if f := field("ranks"); f != "" {
		if s.key.Ranks, err = strconv.Atoi(f); err != nil {
			return s, 0, fmt.Errorf("ranks: %w", err)
		}
	}
	if s.bytes, err = strconv.ParseInt(field("size_bytes"), 10, 64); err != nil {
		return s, 0, fmt.Errorf("size_bytes: %w", err)
	}
	if s.timeUS, err = optMeasurement(field("time_us"), 1e-6, "sec/op"); err != nil {
		return s, 0, fmt.Errorf("time_us %w", err)
	}
	if s.busBW, err = optMeasurement(field("busbw_GBps"), 1, "busbw-GB/s"); err != nil {
		return s, 0, fmt.Errorf("busbw_GBps %w", err)
	}
	link, err := optFloat(field("link_GBps"))
	if err != nil {
		return s, 0, fmt.Errorf("link_GBps: %w", err)
	}
	if math.IsNaN(link) {
		link = 0
	}
	return s, link, nil
}

// optMeasurement parses a CSV measurement: an empty field is unknown (NaN);
// any other must be a number that, times scale, results.CheckMeasurement
// accepts in unit. A plot that left out the rows it could not place would
// show less than the file holds without a word.
func optMeasurement(f string, scale float64, unit string) (float64, error) {
	if f == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: not a number", f)
	}
	if why := results.CheckMeasurement(v*scale, unit); why != "" {
		return 0, fmt.Errorf("%s: %s", f, why)
	}
	return v, nil
}

// optFloat parses a CSV number; an empty field, NaN or an infinity is
// unknown (NaN).
func optFloat(f string) (float64, error) {
	if f == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(f, 64)
	if math.IsInf(v, 0) {
		v = math.NaN()
	}
	return v, err
}

// readBench reads the results of a Go benchmark file. A name such as
// AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1MiB gives the
// key and size; the file configuration gives the requested algorithm, or
// for a run of several the name's own "/algo=ring".
// Lines that are not results (other output mixed in) are skipped, as
// benchstat skips them.
func (l *loader) readBench(data []byte, path string) error {
	r := benchfmt.NewReader(bytes.NewReader(data), path)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		base, parts := res.Name.Parts()
		s := sample{
			key:    Key{Op: strings.ToLower(string(base)), Algo: res.GetConfig("algo"), RedOp: "none"},
			timeUS: math.NaN(), busBW: math.NaN(),
		}
		hasSize := false
		for _, p := range parts {
			k, v, _ := strings.Cut(strings.TrimPrefix(string(p), "/"), "=")
			var err error
			switch k {
			case "backend":
				s.key.Backend = v
			case "ranks":
				s.key.Ranks, err = strconv.Atoi(v)
			case "dtype":
				s.key.DType = v
			case "redop":
				s.key.RedOp = v
			case "inplace":
				s.key.InPlace = v == "true"
			case "size":
				s.bytes, err = parseBinarySize(v)
				hasSize = true
			case "algo": // a run of several algorithms names each row's
				s.key.Algo = v
			}
			if err != nil {
				_, line := res.Pos()
				return fmt.Errorf("line %d: %s: %w", line, k, err)
			}
		}
		if !hasSize {
			continue // not an hccl-test result
		}
		for _, v := range res.Values {
			// The reader tidies ns/op to sec/op, but for 0 ns/op.
			val, unit := benchunit.Tidy(v.Value, v.Unit)
			if unit != "sec/op" && unit != "busbw-GB/s" {
				continue
			}
			why := results.CheckMeasurement(val, unit)
			if unit == "sec/op" && why == "" && math.IsInf(val*1e6, 0) {
				why = "too large a time"
			}
			if why != "" {
				if v.OrigUnit != "" { // as the file gives it
					v.Value, v.Unit = v.OrigValue, v.OrigUnit
				}
				_, line := res.Pos()
				return fmt.Errorf("line %d: %v %s: %s", line, v.Value, v.Unit, why)
			}
			if unit == "sec/op" {
				s.timeUS = val * 1e6
			} else {
				s.busBW = val
			}
		}
		if s.bytes > 0 {
			l.samples = append(l.samples, s)
		}
	}
	if err := r.Err(); errors.Is(err, bufio.ErrTooLong) {
		// benchfmt's message names the line before the long one.
		return fmt.Errorf("line %d: line too long: a Go benchmark line holds at most %d KiB",
			longLine(data, bufio.MaxScanTokenSize), bufio.MaxScanTokenSize>>10)
	} else if err != nil {
		return err
	}
	return nil
}

// longLine returns the number, from 1, of the first line of data that holds
// max bytes or more before its newline (a bufio.Scanner's token too long).
func longLine(data []byte, max int) int {
	n := 0
	for line := range bytes.Lines(data) {
		if n++; len(bytes.TrimSuffix(line, []byte("\n"))) >= max {
			return n
		}
	}
	return n
}

// parseBinarySize parses a size as results.FormatBinarySize writes it:
// "1000B", "1KiB", "1.5MiB", "3GiB", "2TiB".
func parseBinarySize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}} {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		v = math.Round(v * float64(int64(1)<<u.shift))
		if err != nil || !(v >= 0 && v < math.MaxInt64) {
			return 0, fmt.Errorf("bad size %q", s)
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("bad size %q: want a unit B, KiB, MiB, GiB or TiB", s)
}
