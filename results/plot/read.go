package plot

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

// loader accumulates the rows of several files: each row by its key and
// size, with at most results.MaxRuns of its runs (a uniform sample past
// that), so that a file of any length (-N 0) is read in the memory of its
// distinct rows.
type loader struct {
	keys  []Key       // distinct, in the order of their first row
	files []int       // the file of each key
	sizes [][]int64   // the sizes of each key, in the order of their first row
	index map[Key]int // keys of the file being read, as read
	rows  map[rowID]*runs
	first int        // the first key of the file being read
	most  int64      // runs of the most measured row
	rng   *rand.Rand // picks the runs kept past results.MaxRuns
	links []float64  // every link bandwidth seen, one per CSV row or benchmark comment that had one
	// linkLine is the line of the last benchmark comment whose link is
	// in links, so that each comment counts once.
	linkLine int
}

// rowID is one row: a key and a size.
type rowID struct {
	key   int // index in loader.keys
	bytes int64
}

// runs are the runs of one row: all of them up to results.MaxRuns, then
// a uniform sample of them (Algorithm R).
type runs struct {
	kept []run
	seen int64
}

// run is what a point takes from one run of a row; NaN is unknown.
type run struct{ timeUS, busBW float64 }

// add adds a row read from the file being read.
func (l *loader) add(s sample) {
	if l.rows == nil {
		l.rows, l.rng = map[rowID]*runs{}, rand.New(rand.NewPCG(1, 2))
	}
	if l.index == nil {
		l.index = map[Key]int{}
	}
	k, ok := l.index[s.key]
	if !ok {
		k = len(l.keys)
		l.index[s.key] = k
		l.keys, l.files, l.sizes = append(l.keys, s.key), append(l.files, -1), append(l.sizes, nil)
	}
	id := rowID{k, s.bytes}
	rs := l.rows[id]
	if rs == nil {
		rs = &runs{}
		l.rows[id] = rs
		l.sizes[k] = append(l.sizes[k], s.bytes)
	}
	rs.seen++
	l.most = max(l.most, rs.seen)
	r := run{s.timeUS, s.busBW}
	if len(rs.kept) < results.MaxRuns {
		rs.kept = append(rs.kept, r)
	} else if j := l.rng.Int64N(rs.seen); j < results.MaxRuns {
		rs.kept[j] = r
	}
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
	d := l.data(fileLabels(paths))
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

// endFile marks the keys read since the last call as file i's, and
// clears their run ids when the file holds one run only.
func (l *loader) endFile(i int) {
	ks := l.keys[l.first:]
	one := !slices.ContainsFunc(ks, func(k Key) bool { return k.Run != ks[0].Run })
	for j := range ks {
		l.files[l.first+j] = i
		if one {
			ks[j].Run = ""
		}
	}
	l.first, l.index, l.linkLine = len(l.keys), nil, 0
}

// data groups the rows read into series, the files labeled by labels.
func (l *loader) data(labels []string) *Data {
	d := &Data{}
	for i, k := range l.keys {
		if l.files[i] >= 0 && l.files[i] < len(labels) {
			k.File = labels[l.files[i]]
		}
		ser := Series{Key: k}
		slices.Sort(l.sizes[i])
		for _, b := range l.sizes[i] {
			rs := l.rows[rowID{i, b}]
			m := medianRun(rs.kept)
			ser.Points = append(ser.Points, Point{Bytes: b, TimeUS: m.timeUS, BusBW: m.busBW, Rows: int(min(rs.seen, math.MaxInt32))})
		}
		d.Series = append(d.Series, ser)
	}
	d.Note = "each point is one measured row"
	switch {
	case l.most > results.MaxRuns:
		d.Note = fmt.Sprintf("each point is one measured row: of up to %d runs of a row, the one with the median time of a uniform sample of %d", l.most, results.MaxRuns)
	case l.most > 1:
		d.Note = fmt.Sprintf("each point is one measured row: of up to %d runs of a row (--runs), the one with the median time", l.most)
	}
	d.label()
	return d
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

// loadFile reads one file through results.OpenInput, whatever it is (see
// boundedfile): a CSV or Go benchmark file streamed to its end, another
// tool's log at most results.MaxInputBytes. The format is told by the
// file's content.
func (l *loader) loadFile(path string) error {
	in, err := results.OpenInput(path)
	if err != nil {
		return err // it names the file
	}
	defer in.Close()
	rows := len(l.rows)
	switch in.Format {
	case results.FormatCSV:
		err = l.readCSV(in)
		if err == nil && len(l.rows) == rows && len(l.keys) == l.first {
			err = fmt.Errorf("CSV without rows: %w", ErrNoData)
		}
	case results.FormatLog:
		var data []byte
		if data, err = in.ReadAll(); err == nil {
			l.readLog(data, path)
		}
	case results.FormatJSON:
		err = errors.New("looks like JSON lines; plot reads the files of --csv or --bench")
	default:
		err = l.readBench(in, path)
		if err == nil && len(l.keys) == l.first {
			err = fmt.Errorf("no hccl-test rows in CSV or Go benchmark format, nor rows of nccl-tests, rccl-tests, hccl_test or nccom-test output: %w", ErrNoData)
		}
	}
	if ferr := in.Err(); ferr != nil { // stalled, too large, a line too long: it names the file
		return ferr
	}
	if err != nil {
		if errors.Is(err, ErrNoData) && blank(in.Head()) {
			err = fmt.Errorf("file is empty: %w", ErrNoData)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// blank reports whether data holds only blank lines and '#' comments.
func blank(data []byte) bool {
	for line := range bytes.Lines(data) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
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
				l.add(s)
			}
		}
	}
	return len(runs) > 0
}
