// Package plot draws what hccl-test measured: bus bandwidth and time
// against message size, one line per collective and configuration, read
// back from the files that --csv and --bench write.
//
// It lives apart from package results because gonum.org/v1/plot, with its
// fonts and image encoders, adds about 9 MB to a binary and over a hundred
// packages to the build; only a command that plots should import it.
package plot

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Key identifies one series: the rows of one line in the plots. It holds
// everything that tells two rows of a sweep apart but their size, so that
// rows measured apart (two files, two bucket counts of --fusion, two
// domains of --group) are never drawn as one line.
type Key struct {
	// File names the file the rows were read from when several are
	// plotted (its base name, or its path where base names collide); ""
	// when there is one.
	File string
	// Run is the run's id when one file holds several runs (files
	// concatenated); "" when it holds one.
	Run     string
	Op      string // collective, lower case: allreduce, allgather, ...
	DType   string // element type: fp32, ...
	RedOp   string // reduction, or "none" for collectives that do not reduce
	Root    string // root rank, "" for collectives without one
	Backend string // transport: shm, tcp, ...
	Ranks   int
	Group   string // communication domain (--group), "" for the whole world
	Buckets int    // collectives per iteration (--fusion) when more than one; 0 for one
	Algo    string // algorithm as requested (auto or a name), not the one auto chose per size
	InPlace bool
}

// Point is one message size of a series: one measured row. Where the row
// was measured several times (--runs repeats the very same row), it is the
// run with the median time (the lower of the middle two for an even
// count), and its bandwidth is that run's: never a value computed across
// runs.
type Point struct {
	Bytes  int64   // message size in bytes, > 0
	TimeUS float64 // time of one op in microseconds; NaN when the row gave none
	BusBW  float64 // bus bandwidth in GB/s (1e9 bytes/s); NaN when the row gave none
	Rows   int     // runs of the row that the point was chosen from
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
	// Note says, under the plot, what a point is.
	Note string
}

// medianRun returns the run of ss, the runs of one row, with the median
// time: the lower of the middle two for an even count, so that it is a
// run, not a mean of two. Runs without a time come last; where no run has
// one, the run with the median bandwidth.
func medianRun(ss []run) run {
	ss = slices.Clone(ss)
	by := func(f func(run) float64) func(a, b run) int {
		return func(a, b run) int {
			x, y := f(a), f(b)
			return cmp.Or(cmp.Compare(boolInt(math.IsNaN(x)), boolInt(math.IsNaN(y))), cmp.Compare(x, y))
		}
	}
	f := func(s run) float64 { return s.timeUS }
	if !slices.ContainsFunc(ss, func(s run) bool { return !math.IsNaN(s.timeUS) }) {
		f = func(s run) float64 { return s.busBW }
	}
	slices.SortStableFunc(ss, by(f))
	known := len(ss) - countFunc(ss, func(s run) bool { return math.IsNaN(f(s)) })
	return ss[max(known-1, 0)/2]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// labelParts describes a key in words, in the order labels show them; ""
// is a part left unsaid. The op comes first.
func labelParts(k Key) []string {
	file, run := k.File, ""
	if k.Run != "" {
		run = "run " + k.Run
	}
	root := ""
	if k.Root != "" {
		root = "root " + k.Root
	}
	group := ""
	if k.Group != "" {
		group = "group " + k.Group
	}
	buckets := "1 bucket"
	if k.Buckets > 1 {
		buckets = strconv.Itoa(k.Buckets) + " buckets"
	}
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
	return []string{k.Op, file, run, k.DType, redop, root, k.Backend, ranks, group, algo, buckets, place}
}

// label sets the title to the parts that all series share and each
// series' label to its op and the parts that differ. Out-of-place and one
// bucket are said only where in-place or fused rows are plotted too.
func (d *Data) label() {
	if len(d.Series) == 0 {
		return
	}
	parts := make([][]string, len(d.Series))
	for i, s := range d.Series {
		parts[i] = labelParts(s.Key)
	}
	anyInPlace := slices.ContainsFunc(d.Series, func(s Series) bool { return s.Key.InPlace })
	anyBuckets := slices.ContainsFunc(d.Series, func(s Series) bool { return s.Key.Buckets > 1 })
	last := len(parts[0]) - 1
	var common []string
	labels := make([][]string, len(d.Series))
	for j := range parts[0] {
		same := true
		for i := range parts {
			same = same && parts[i][j] == parts[0][j]
		}
		if j == last && !anyInPlace || j == last-1 && !anyBuckets {
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
