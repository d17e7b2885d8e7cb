package plot

import (
	"bufio"
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
		return nil, errors.New("plot: no files to load")
	}
	var l loader
	for i, p := range paths {
		if err := l.loadFile(p); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		l.endFile(i)
	}
	labels := fileLabels(paths)
	for i := range l.samples {
		l.samples[i].key.File = labels[l.samples[i].file]
	}
	d := group(l.samples)
	if n := len(d.Series); n > MaxSeries {
		return nil, fmt.Errorf("plot: %s: %d series (%s and more): at most %d can be drawn apart; plot fewer files or a part of them",
			strings.Join(paths, ", "), n, d.Series[0].Label, MaxSeries)
	}
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

// readBench reads the results of a Go benchmark file. A name such as
// AllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1MiB gives the
// key and size; the file configuration gives the requested algorithm, or
// for a run of several the name's own "/algo=ring".
// Lines that are not results (other output mixed in) are skipped, as
// benchstat skips them.
func (l *loader) readBench(data []byte, path string) error {
	comments := readComments(data)
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
		_, line := res.Pos()
		c := comments.at(line)
		s.key.Run = c.run
		if c.link > 0 && c.line > l.linkLine {
			l.links, l.linkLine = append(l.links, c.link), c.line
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
			case "root":
				s.key.Root = v
				_, err = strconv.Atoi(v)
			case "group":
				s.key.Group = v
			case "buckets":
				if s.key.Buckets, err = strconv.Atoi(v); s.key.Buckets == 1 {
					s.key.Buckets = 0
				}
			case "size":
				s.bytes, err = parseBinarySize(v)
				hasSize = true
			case "algo": // a run of several algorithms names each row's
				s.key.Algo = v
			}
			if err != nil {
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

// benchComment is what a Go benchmark file's comment lines say about the
// results that follow them, as results.BenchFmt writes them:
// "# hccl-test VERSION  run ID" and "# link bandwidth 12.5 GB/s (source)".
type benchComment struct {
	line int     // of the comment, from 1; 0 for none
	run  string  // run id, "" when not said
	link float64 // link bandwidth in GB/s, 0 when not said
}

// benchComments are a file's comments, in line order.
type benchComments []benchComment

// readComments reads the comment lines of a Go benchmark file, which its
// readers skip: the link bandwidth is there, not in the configuration
// lines, so that benchstat still compares two runs that measured their
// links apart.
func readComments(data []byte) benchComments {
	var cs benchComments
	n := 0
	for line := range bytes.Lines(data) {
		n++
		text, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "#")
		if !ok {
			continue
		}
		fields := strings.Fields(text)
		switch {
		case len(fields) >= 4 && fields[0] == "hccl-test" && fields[2] == "run":
			cs = append(cs, benchComment{line: n, run: fields[3]})
		case len(fields) >= 4 && fields[0] == "link" && fields[1] == "bandwidth" && fields[3] == "GB/s":
			if v, err := strconv.ParseFloat(fields[2], 64); err == nil && v > 0 && !math.IsInf(v, 0) {
				c := cs.at(n)
				c.line, c.link = n, v
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// at returns what the comments before line say: the last run id and the
// link bandwidth said after it.
func (cs benchComments) at(line int) benchComment {
	i, _ := slices.BinarySearchFunc(cs, line, func(c benchComment, l int) int { return cmp.Compare(c.line, l) })
	if i == 0 {
		return benchComment{}
	}
	return cs[i-1]
}
