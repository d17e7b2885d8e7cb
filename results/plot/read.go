package plot

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	file   int // index of the file in Load's paths
}

// loader accumulates the rows of several files.
type loader struct {
	samples []sample
	done    int       // samples of the files ended (endFile)
	links   []float64 // every link bandwidth seen, one per CSV row or benchmark comment that had one
	// linkLine is the line of the last benchmark comment whose link is
	// in links, so that each comment counts once.
	linkLine int
}

// MaxSeries is the most series Load accepts: as many as there are
// combinations of color, point shape and dash pattern, so that no two
// series look alike.
const MaxSeries = 64

// Load reads one or more files written by hccl-test with --csv or --bench,
// or logs of other tools (nccl-tests, rccl-tests, hccl_test, nccom-test,
// each test of a log a run of the file), telling them apart by their content, and groups their rows into series
// by Key: every file its own series, and within a file every combination
// of op, type, reduction, root, group, buckets, algorithm, placement and
// run (where files were concatenated) its own. The rows of one Key and
// size are the runs of one row (--runs): the point drawn is the run with
// the median time (see Point). Rows of size 0 are left out: a log axis has
// no place for them. More than MaxSeries series are refused.
//
// Data.LinkGBps is the link bandwidth of the CSV rows and of the comment
// lines of Go benchmark files; it is 0 when none gives one or when they
// give different ones.
func Load(paths ...string) (*Data, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files to load")
	}
	var l loader
	for i, p := range paths {
		if err := l.loadFile(p); err != nil {
			return nil, err
		}
		l.endFile(i)
	}
	labels := fileLabels(paths)
	for i := range l.samples {
		l.samples[i].key.File = labels[l.samples[i].file]
	}
	d := group(l.samples)
	if n := len(d.Series); n > MaxSeries {
		return nil, fmt.Errorf("%s: %d series (%s and more): at most %d can be drawn apart; plot fewer files or a part of them",
			strings.Join(paths, ", "), n, d.Series[0].Label, MaxSeries)
	}
	if !slices.ContainsFunc(d.Series, func(s Series) bool {
		return slices.ContainsFunc(s.Points, func(p Point) bool { return !math.IsNaN(p.TimeUS) || !math.IsNaN(p.BusBW) })
	}) {
		return nil, fmt.Errorf("%s: no row has a time or a bus bandwidth: %w", strings.Join(paths, ", "), ErrNoData)
	}
	if len(l.links) > 0 && !slices.ContainsFunc(l.links, func(v float64) bool { return v != l.links[0] }) {
		d.LinkGBps = l.links[0]
	}
	return d, nil
}

// endFile marks the samples read since the last call as file i's, and
// clears their run ids when the file holds one run only.
func (l *loader) endFile(i int) {
	ss := l.samples[l.done:]
	l.done, l.linkLine = len(l.samples), 0
	one := !slices.ContainsFunc(ss, func(s sample) bool { return s.key.Run != ss[0].key.Run })
	for j := range ss {
		ss[j].file = i
		if one {
			ss[j].key.Run = ""
		}
	}
}

// fileLabels returns how series name the files of paths: "" for a single
// file, else base names, or the paths as given where base names collide.
func fileLabels(paths []string) []string {
	labels := make([]string, len(paths))
	if len(paths) == 1 {
		return labels
	}
	seen := map[string]int{}
	for i, p := range paths {
		labels[i] = filepath.Base(p)
		seen[labels[i]]++
	}
	for i, p := range paths {
		if seen[labels[i]] > 1 {
			labels[i] = p
		}
	}
	return labels
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
	case l.readLog(data, name):
	case strings.HasPrefix(first, "{"):
		return errors.New("looks like JSON lines; plot reads the files of --csv or --bench")
	default:
		if err := l.readBench(data, name); err != nil {
			return err
		}
		if len(l.samples) == before {
			return fmt.Errorf("no hccl-test rows in CSV or Go benchmark format, nor rows of nccl-tests, rccl-tests, hccl_test or nccom-test output: %w", ErrNoData)
		}
	}
	return nil
}

// readLog reads data as the log of another tool (nccl-tests, rccl-tests,
// hccl_test, nccom-test; see results.ReadLog) and reports whether it is
// one: whether it has a row. Each test of the log is a run of the file.
func (l *loader) readLog(data []byte, name string) bool {
	runs, _ := results.LogRuns(name, data)
	for _, run := range runs {
		h := run.Header
		for _, r := range run.Records {
			s := sample{key: Key{Run: h.RunID, Op: r.Op, DType: r.DType, RedOp: cmp.Or(r.RedOp, "none"),
				Backend: h.Backend, Ranks: h.Ranks, InPlace: r.InPlace}, bytes: r.Bytes, timeUS: r.TimeUS, busBW: r.BusBW}
			if r.Root >= 0 {
				s.key.Root = strconv.Itoa(r.Root)
			}
			if s.bytes > 0 {
				l.samples = append(l.samples, s)
			}
		}
	}
	return len(runs) > 0
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
		Run: field("run_id"), Op: field("op"), DType: field("dtype"), RedOp: field("redop"),
		Backend: field("backend"), Group: field("group"), Algo: field("algo_requested"),
		InPlace: field("in_place") == "true",
	}}
	if s.key.Algo == "" { // a file without algo_requested
		s.key.Algo = field("algo")
	}
	for _, n := range []struct {
		name string
		v    *int
	}{{"ranks", &s.key.Ranks}, {"buckets", &s.key.Buckets}} {
		if f := field(n.name); f != "" {
			v, err := strconv.Atoi(f)
			if err != nil {
				return s, 0, fmt.Errorf("%s: %w", n.name, err)
			}
			*n.v = v
		}
	}
	if s.key.Buckets == 1 {
		s.key.Buckets = 0
	}
	if root := field("root"); root != "" && root != "-1" {
		if _, err := strconv.Atoi(root); err != nil {
			return s, 0, fmt.Errorf("root: %w", err)
		}
		s.key.Root = root
	}
	var err error
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
