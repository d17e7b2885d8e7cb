// Package peerlog reads the logs of other collective benchmarks as people
// paste them: the text output of nccl-tests (every generation of its
// table), rccl-tests (its tables, its JSON lines and CSV), Huawei's
// hccl_test, AWS's nccom-test, and nccl-tests' -J JSON report.
//
// The reader is tolerant: a line that is not data is skipped, whatever it
// is (NCCL INFO lines, MPI warnings, prefixes such as Open MPI's
// "[1,0]<stdout>:", a row cut by an error message, a JSON line cut in
// half). A table's layout comes from its header; a table whose header was
// cut off is read where a row's shape says its layout without doubt, and
// skipped where it does not.
//
// The package knows nothing of hccl-test's own records: package results
// turns Rows into them.
package peerlog

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/dtype"
)

// The tools whose logs Parse reads, as Row.Tool names them.
const (
	NCCLTests = "nccl-tests"
	RCCLTests = "rccl-tests"
	HCCLTest  = "hccl_test"
	NccomTest = "nccom-test"
	// Ours is hccl-test's own -J report read back: nccl-tests' form,
	// told apart by its devices, each a CPU named by the backend
	// ("CPU, --backend shm"), which Row.Backend gives.
	Ours = "hccl-test"
)

// Library returns the communication library that tool measures: nccl,
// rccl, hccl or neuron.
func Library(tool string) string {
	switch tool {
	case NCCLTests:
		return "nccl"
	case RCCLTests:
		return "rccl"
	case HCCLTest:
		return "hccl"
	case NccomTest:
		return "neuron"
	}
	return ""
}

// Figures a Row may know; Row.Known holds the ones it does.
const (
	KnowTime  = 1 << iota // TimeUS
	KnowAlgBW             // AlgBW
	KnowBusBW             // BusBW
	KnowCount             // Count
	KnowRoot              // Root
	KnowPlace             // InPlace: the log says the placement
	KnowMin               // MinUS (nccl-tests -I)
	KnowMax               // MaxUS (nccl-tests -I)
	KnowP99               // P99US (nccl-tests -I)
)

// Row is one measured row of a log, one placement of it: nccl-tests'
// out-of-place and in-place halves of a line are two Rows. A figure the
// log does not give is left out of Known and is 0; a figure in Known is
// finite and not negative, and a time is above 0.
type Row struct {
	Tool    string // NCCLTests, ...
	Segment int    // which test of the file, from 1: each header starts one
	Line    int    // line of the file, from 1
	Op      string // collective in hccl-test's names (allreduce, ...), "" when the log does not say
	DType   string // element type in hccl-test's names where known (fp32, ...), else as the log writes it; "" when not said
	RedOp   string // reduction (sum, ...), "none" for collectives that do not reduce, "" when not said
	Root    int    // root rank when KnowRoot; -1 for collectives without one
	Bytes   int64  // size in bytes, as the tool defines it
	Count   int64  // elements, when KnowCount
	InPlace bool   // in-place buffers (only when KnowPlace)
	TimeUS  float64
	AlgBW   float64 // GB/s
	BusBW   float64 // GB/s
	MinUS   float64
	MaxUS   float64
	P99US   float64
	// Wrong is the number of wrong elements the log reports, -1 when it
	// reports none (not checked, or a verdict or an error size rather
	// than a count: see Check).
	Wrong int64
	// Check is what the log says of the check when it is not a count of
	// wrong elements: "failed", "not checked", "max error 5e-07"; "" when
	// Wrong says it all.
	Check string
	Ranks int    // ranks of the run, 0 when the log does not say
	Host  string // host of rank 0, "" when the log does not say
	// Iters is the timed iterations of each row, as the log's header
	// gives them (nccl-tests' "iters: 20", hccl_test's "iters is 20"),
	// 0 when it does not.
	Iters int
	// Backend is the backend that hccl-test's own report (Ours) names,
	// "" for the other tools (see Library).
	Backend string
	Known   int // the Know* figures the row gives
}

// Segment is what a log says of one of its tests beyond its rows.
type Segment struct {
	// Hosts is the host of every rank, by rank, from the rank-to-host
	// lines ("#  Rank  3 Group  0 Pid 1234 on node02 device  3 ...") or
	// a -J report's devices; nil unless the log names the host of every
	// rank from 0 to its last. Callers must not modify it.
	Hosts []string
}

// Log is what Parse read from one file.
type Log struct {
	Rows []Row
	// Segments[i] is what the log says of the test whose rows have
	// Segment i+1.
	Segments []Segment
	// Lines is the number of lines read; Skipped those that were neither
	// data nor a header the reader understood.
	Lines, Skipped int
}

// contains reports whether ss holds s.
func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Parse reads a log. It never fails: what it cannot read it skips.
func Parse(data []byte) Log {
	if rows, seg, ok := parseReport(data); ok {
		l := Log{Rows: rows, Lines: bytes.Count(data, []byte("\n")) + 1}
		if len(rows) > 0 {
			l.Segments = []Segment{seg}
		}
		return l
	}
	p := newParser()
	for line := range bytes.Lines(data) {
		p.line(string(line))
	}
	return p.log
}

// Looks reports whether data reads as a log of one of the tools: whether
// Parse finds at least one row in it.
func Looks(data []byte) bool { return len(Parse(data).Rows) > 0 }

// Starts reports whether data holds the start of a test of nccl-tests or
// rccl-tests (its "# nThread" line, a rank-to-host line): the head of a log
// whose rows come later than data, as after the 16,000 rank lines of a
// run on 2,000 servers.
func Starts(data []byte) bool {
	for line := range bytes.Lines(data) {
		s := clean(string(line))
		if strings.HasPrefix(s, "#") {
			t := strings.TrimSpace(s[1:])
			if strings.HasPrefix(t, "nThread ") || testStart.MatchString(s) || deviceLine.MatchString(t) {
				return true
			}
		}
	}
	return false
}

// prefixes are what launchers put before a process's output lines: Open
// MPI's --tag-output ([1,0]<stdout>:), --timestamp-output, Slurm's srun
// -l (0: ), MPICH's -prepend-rank ([0] ) and Ray's, as SkyPilot prints
// its nodes' output ("(head, rank=0, pid=3808) ", "(worker1, rank=1,
// pid=2769, ip=10.0.0.2) ").
var prefixes = regexp.MustCompile(`^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\[\d+\]\s|\d+:\s|\([^()]*\bpid=\d+[^()]*\)\s)`)

// clean returns line without its launcher prefix, carriage return and
// surrounding space.
func clean(line string) string {
	line = strings.TrimRight(line, "\r\n")
	for i := 0; i < 3; i++ { // a tag inside a tag: srun under mpirun
		loc := prefixes.FindStringIndex(line)
		if loc == nil {
			break
		}
		line = line[loc[1]:]
	}
	return strings.TrimSpace(line)
}

// opNames maps the names tools give collectives, normalized (lower case,
// no '_', '-' or "_perf"/"_test" suffix), to hccl-test's.
var opNames = map[string]string{
	"allreduce": "allreduce", "allr": "allreduce",
	"allgather": "allgather", "allg": "allgather",
	"reducescatter": "reducescatter", "redsct": "reducescatter", "rdsct": "reducescatter",
	"broadcast": "broadcast", "bcast": "broadcast",
	"reduce": "reduce", "alltoall": "alltoall", "all2all": "alltoall",
	"sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter",
	"alltoallv": "alltoallv", "allgatherv": "allgatherv", "reducescatterv": "reducescatterv",
	"hypercube": "hypercube", "alltoallvc": "alltoallvc", "permute": "permute",
}

// opName returns hccl-test's name of the collective a tool names s
// (all_reduce_perf, AllReduce, all_reduce_test, allr), or "" when s names
// none.
func opName(s string) string {
	s = strings.ToLower(s)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for _, suf := range []string{"_perf_mpi", "_perf", "_test"} {
		s = strings.TrimSuffix(s, suf)
	}
	s = strings.NewReplacer("_", "", "-", "").Replace(s)
	return opNames[s]
}

// OpFromName returns the collective that a file's name says the file
// holds, in hccl-test's names: all_reduce_perf.log, nccl_allreduce_8g.txt,
// alltoall.out, AllGather-2nodes.log, reduce_scatter_test_16p.txt; "" when
// the name names none, or more than one. The name is read as words (split
// at anything not a letter or digit, and between letters and digits), and
// the longest run of words that names a collective wins: all_reduce is
// allreduce, not reduce.
func OpFromName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var words []string
	start := -1
	kind := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 1
		case c >= '0' && c <= '9':
			return 2
		}
		return 0
	}
	name = strings.ToLower(name)
	for i := 0; i <= len(name); i++ {
		k := 0
		if i < len(name) {
			k = kind(name[i])
		}
		if start >= 0 && (k == 0 || k != kind(name[start])) {
			words = append(words, name[start:i])
			start = -1
		}
		if start < 0 && k != 0 {
			start = i
		}
	}
	found := ""
	for i := 0; i < len(words); {
		n := 1
		for j := min(len(words), i+4); j > i; j-- { // no name of a collective is more than 4 words
			op := opNames[strings.Join(words[i:j], "")]
			if op == "" {
				continue
			}
			if found != "" && found != op {
				return ""
			}
			found, n = op, j-i
			break
		}
		i += n
	}
	return found
}

// dtypeFallback names the types that package dtype does not know yet, as
// the tools spell them.
var dtypeFallback = map[string]string{
	"f8e4m3": "f8e4m3", "fp8e4m3": "f8e4m3", "fp8_e4m3": "f8e4m3", "float8e4m3": "f8e4m3",
	"f8e5m2": "f8e5m2", "fp8e5m2": "f8e5m2", "fp8_e5m2": "f8e5m2", "float8e5m2": "f8e5m2",
	"int": "int32", "uint": "uint32", "char": "int8",
}

// dtypeName returns hccl-test's name of the type a tool names s; a type
// neither package dtype nor the fallback knows keeps its spelling.
func dtypeName(s string) string {
	if d, err := dtype.Parse(s); err == nil {
		return d.String()
	}
	if n, ok := dtypeFallback[strings.ToLower(s)]; ok {
		return n
	}
	return s
}

// redopName returns hccl-test's name of the reduction s: sum, prod, max,
// min, avg, mulsum; "none" for a collective that does not reduce.
func redopName(s string) string {
	l := strings.ToLower(s)
	if o, err := dtype.ParseOp(l); err == nil {
		return o.String()
	}
	switch l {
	case "none", "mulsum":
		return l
	case "premulsum":
		return "mulsum"
	}
	return s
}

// word reports whether s can be a type or reduction name in a row.
var word = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// parseSize reads a size or count: a non-negative integer (nccl-tests'
// %li, possibly 11 digits and more).
func parseSize(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v >= 0
}

// figure is a number read from a field: ok says the field is a number or
// a mark of no value (N/A, -, nan), known that it is a usable value.
type figure struct {
	v         float64
	ok, known bool
}

// parseFigure reads a time or bandwidth field: a finite number of at
// least 0 is known; N/A, "-" and nan are fields without a value; anything
// else is not a figure.
func parseFigure(s string) figure {
	switch strings.ToLower(s) {
	case "n/a", "na", "-", "nan", "-nan", "null":
		return figure{ok: true}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return figure{}
	}
	return figure{v: v, ok: true, known: v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v)}
}

// parseWrong reads a #wrong field: a count (nccl-tests prints it with %g,
// so 1e+06 is a count too), or N/A when not checked.
func parseWrong(s string) (wrong int64, ok bool) {
	f := parseFigure(s)
	switch {
	case !f.ok:
		return 0, false
	case !f.known || f.v != math.Trunc(f.v) || f.v > 1<<62:
		return -1, true
	}
	return int64(f.v), true
}
