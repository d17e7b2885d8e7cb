// Package plot draws what hccl-test measured: bus bandwidth and time
// against message size, one line per collective and configuration, read
// back from the files that --csv and --bench write.
//
// It lives apart from package results because gonum.org/v1/plot, with its
// fonts and image encoders, adds about 9 MB to a binary and over a hundred
// packages to the build; only a command that plots should import it.
package plot

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Key identifies one series: the rows of one line in the plots.
type Key struct {
	Op      string // collective, lower case: allreduce, allgather, ...
	DType   string // element type: fp32, ...
	RedOp   string // reduction, or "none" for collectives that do not reduce
	Backend string // transport: shm, tcp, ...
	Ranks   int
	Algo    string // algorithm as requested (auto or a name), not the one auto chose per size
	InPlace bool
}

// Point is one message size of a series: the medians of the rows measured
// at that size.
type Point struct {
	Bytes  int64   // message size in bytes, > 0
	TimeUS float64 // median time of one op in microseconds; NaN when no row gave one
	BusBW  float64 // median bus bandwidth in GB/s (1e9 bytes/s); NaN when no row gave one
	Rows   int     // rows the medians are over: runs of the row in all files loaded
}

// Series is one line: a label and its points, in increasing size.
type Series struct {
	Key    Key
	Label  string // the op and what tells this series from the others, e.g. "allreduce" or "allreduce tcp"
	Points []Point
}

// Data is what Write draws.
type Data struct {
	// Title is what all series share, e.g. "fp32, shm, 8 ranks, algo auto";
	// the series' labels leave it out.
	Title string
	// Series in the order their first row was read.
	Series []Series
	// LinkGBps is the link bandwidth in GB/s that the busbw plot marks, or 0
	// for none.
	LinkGBps float64
}

// group makes series of samples, a point per size with the medians of
// the samples of that size, and labels them.
func group(samples []sample) *Data {
	type row struct {
		key   Key
		bytes int64
	}
	var keys []Key
	rows := map[row][]sample{}
	sizes := map[Key][]int64{}
	for _, s := range samples {
		if _, ok := sizes[s.key]; !ok {
			keys = append(keys, s.key)
		}
		r := row{s.key, s.bytes}
		if _, ok := rows[r]; !ok {
			sizes[s.key] = append(sizes[s.key], s.bytes)
		}
		rows[r] = append(rows[r], s)
	}
	d := &Data{}
	for _, k := range keys {
		ser := Series{Key: k}
		slices.Sort(sizes[k])
		for _, b := range sizes[k] {
			ss := rows[row{k, b}]
			ser.Points = append(ser.Points, Point{
				Bytes:  b,
				TimeUS: median(ss, func(s sample) float64 { return s.timeUS }),
				BusBW:  median(ss, func(s sample) float64 { return s.busBW }),
				Rows:   len(ss),
			})
		}
		d.Series = append(d.Series, ser)
	}
	d.label()
	return d
}

// median returns the median of the known (not NaN) values of f over ss,
// or NaN when none is known. Time and bandwidth each take their own
// median; with an odd number of runs both come from the same run.
func median(ss []sample, f func(sample) float64) float64 {
	var v []float64
	for _, s := range ss {
		if x := f(s); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// labelParts describes a key in words, in the order labels show them; ""
// is a part left unsaid. The op comes first.
func labelParts(k Key) []string {
	redop := k.RedOp
	if redop == "sum" || redop == "none" {
		redop = ""
	}
	ranks := ""
	if k.Ranks > 0 {
		ranks = strconv.Itoa(k.Ranks) + " ranks"
	}
	algo := ""
	if k.Algo != "" {
		algo = "algo " + k.Algo
	}
	place := "out-of-place"
	if k.InPlace {
		place = "in-place"
	}
	return []string{k.Op, k.DType, redop, k.Backend, ranks, algo, place}
}

// label sets the title to the parts that all series share and each
// series' label to its op and the parts that differ. Out-of-place is said
// only where in-place rows are plotted too.
func (d *Data) label() {
	if len(d.Series) == 0 {
		return
	}
	parts := make([][]string, len(d.Series))
	for i, s := range d.Series {
		parts[i] = labelParts(s.Key)
	}
	anyInPlace := slices.ContainsFunc(d.Series, func(s Series) bool { return s.Key.InPlace })
	last := len(parts[0]) - 1
	var common []string
	labels := make([][]string, len(d.Series))
	for j := range parts[0] {
		same := true
		for i := range parts {
			same = same && parts[i][j] == parts[0][j]
		}
		if j == last && !anyInPlace {
			continue
		}
		if same && j > 0 {
			if parts[0][j] != "" {
				common = append(common, parts[0][j])
			}
			continue
		}
		for i := range parts {
			if parts[i][j] != "" {
				labels[i] = append(labels[i], parts[i][j])
			}
		}
	}
	d.Title = strings.Join(common, ", ")
	for i := range d.Series {
		d.Series[i].Label = strings.Join(labels[i], " ")
	}
}
