package isolate

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hccl-test/hccl-test/results"
)

// Log is one pairwise log as ReadDir read it: its two hosts and, for the
// one op analysed, the figure of each size it measured.
type Log struct {
	Path      string
	Hosts     [2]string // in the order the log or its name gives them
	HostsFrom string    // "rank lines" or "file name"
	Tool      string    // nccl-tests, rccl-tests, hccl_test, nccom-test, hccl-test
	Ops       []string  // every op the log measured, in order
	// Figure maps a size in bytes to the median figure (busbw, or algbw
	// where the log gives no busbw: see Unit) over the log's rows of the
	// op at that size, both placements and every repetition.
	Figure map[int64]float64
	Unit   string // "busbw" or "algbw"
	// Wrong is the sum of the op's rows' wrong elements; CheckFailed the
	// rows whose check the log calls failed (hccl_test).
	Wrong       int64
	CheckFailed int
	// Failure is the first line of the log that says the run failed
	// (nccl-tests' "Test NCCL failure", a signal, a timeout), "" if none.
	Failure     string
	FailureLine int
	Lines       int // lines in the log
	// Ranks is the ranks the log's run had (its rank lines, or what its
	// header says), 0 where it does not say (hccl_test, a CSV without a
	// ranks column).
	Ranks int
	recs  []results.Record
}

// use sets the log's figures, Wrong and CheckFailed from its rows of op,
// and of no op named (hccl_test's log does not say its op unless its
// command line was kept).
func (l *Log) use(op string) {
	l.Figure, l.Unit, l.Wrong, l.CheckFailed = map[int64]float64{}, "busbw", 0, 0
	mine := func(r results.Record) bool { return r.Op == op || r.Op == "" }
	for _, r := range l.recs {
		if mine(r) && math.IsNaN(r.BusBW) {
			l.Unit = "algbw"
		}
	}
	figures := map[int64][]float64{}
	for _, r := range l.recs {
		if !mine(r) {
			continue
		}
		v := r.BusBW
		if l.Unit == "algbw" {
			v = r.AlgBW
		}
		if !math.IsNaN(v) {
			figures[r.Bytes] = append(figures[r.Bytes], v)
		}
		if r.Wrong > 0 {
			l.Wrong += r.Wrong
		}
		if r.CheckNote == "failed" {
			l.CheckFailed++
		}
	}
	for size, vs := range figures {
		l.Figure[size] = median(vs)
	}
}

// failureLine matches a line that says a run failed, as nccl-tests,
// rccl-tests, MPI and Slurm write it. "error" alone is not enough: a
// healthy log has an "error" column, and MPI warns of OpenFabrics errors.
var failureLine = regexp.MustCompile(`(?i)test (?:nccl |cuda |hip |rccl )?failure|segmentation fault|core dumped|` +
	`mpirun noticed|exited on signal|srun: error|\btimed out\b|watchdog|out of bounds values\s*:\s*[1-9]\d*|\bkilled\b|\baborted\b`)

// maxFailure is the most of a failure line that Log.Failure keeps.
const maxFailure = 100

// readLog reads the log at path (a regular file): its rows through
// results' readers, its hosts from its rank lines, and its failure lines.
// Hosts are left empty when the log names none; use sets the figures.
func readLog(path string) (*Log, error) {
	in, err := results.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	data, err := in.ReadAll()
	if err != nil {
		return nil, err
	}
	l := &Log{Path: path, Figure: map[int64]float64{}}
	var recs []results.Record
	if in.Format == results.FormatCSV {
		l.Tool = results.SourceOurs
		if recs, l.Ranks, err = csvRecords(path, data); err != nil {
			return nil, err
		}
	} else {
		runs, _ := results.LogRuns(path, data)
		for _, r := range runs {
			if l.Tool == "" {
				l.Tool = r.Header.Source
			}
			if l.Ranks == 0 {
				l.Ranks = r.Header.Ranks
			}
			recs = append(recs, r.Records...)
		}
	}
	if hs := RankHosts(data); len(hs) > 2 {
		return nil, fmt.Errorf("%s: its rank lines name %d hosts (%s): isolate reads logs of pairs of hosts", path, len(hs), strings.Join(hs, ", "))
	} else if len(hs) == 1 {
		return nil, fmt.Errorf("%s: its rank lines name one host, %s: isolate reads logs of pairs of hosts", path, hs[0])
	} else if len(hs) == 2 {
		l.Hosts, l.HostsFrom = [2]string{hs[0], hs[1]}, "rank lines"
	}
	l.recs = recs
	for _, r := range recs {
		if r.Op != "" && !slices.Contains(l.Ops, r.Op) {
			l.Ops = append(l.Ops, r.Op)
		}
	}
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if m := failureLine.FindIndex(line); m != nil {
			// From the match: a row cut by the failure is noise here.
			l.Failure, l.FailureLine = strings.Join(strings.Fields(string(line[m[0]:])), " "), n
			if len(l.Failure) > maxFailure {
				l.Failure = l.Failure[:maxFailure] + "..."
			}
			break
		}
	}
	l.Lines = bytes.Count(data, []byte("\n"))
	return l, nil
}

// csvRecords reads hccl-test's CSV (the --csv of a run, or convert's):
// op, size_bytes, busbw_GBps, algbw_GBps, wrong and check_note by name,
// and the ranks of its first row that gives them (0 if none does).
// (results reads such files as samples for compare, which keep no wrong
// count; this reads the few columns isolate needs.)
func csvRecords(path string, data []byte) ([]results.Record, int, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.Comment, r.FieldsPerRecord, r.LazyQuotes = '#', -1, true
	header, err := r.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"op", "size_bytes", "busbw_GBps"} {
		if _, ok := col[need]; !ok {
			return nil, 0, fmt.Errorf("%s: no %s column in its header", path, need)
		}
	}
	field := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	number := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return math.NaN()
		}
		return v
	}
	var recs []results.Record
	ranks := 0
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %v", path, err)
		}
		if field(row, "schema_version") == "schema_version" { // concatenated files
			continue
		}
		size, err := strconv.ParseInt(field(row, "size_bytes"), 10, 64)
		if err != nil || size < 0 {
			line, _ := r.FieldPos(0)
			return nil, 0, fmt.Errorf("%s:%d: size_bytes %q is not a size", path, line, field(row, "size_bytes"))
		}
		rec := results.Record{Op: field(row, "op"), Bytes: size, BusBW: number(field(row, "busbw_GBps")),
			AlgBW: number(field(row, "algbw_GBps")), Wrong: -1, CheckNote: field(row, "check_note")}
		if w, err := strconv.ParseInt(field(row, "wrong"), 10, 64); err == nil {
			rec.Wrong = w
		}
		if n, err := strconv.Atoi(field(row, "ranks")); err == nil && n > 0 && ranks == 0 {
			ranks = n
		}
		recs = append(recs, rec)
	}
	return recs, ranks, nil
}

// ReadDir reads every regular file of dir whose name does not start with
// '.' as a pairwise log (subdirectories, images and .md notes are not
// read) and returns the
// logs, sorted by path, and the op analysed: op when given, else the one
// op all the logs measured. Refused: dir is not a
// directory or holds no log; a file that is not regular (a FIFO, a
// device); a log whose hosts neither its rank lines nor its name give; a
// log of one host or more than two; logs of several ops without op; op
// measured by no log.
func ReadDir(dir string, op string) ([]*Log, string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, "", err
	}
	if !st.IsDir() {
		return nil, "", fmt.Errorf("%s is not a directory: isolate reads a directory of pairwise logs", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	var logs []*Log
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() || images[strings.ToLower(filepath.Ext(e.Name()))] {
			continue
		}
		path := filepath.Join(dir, e.Name())
		st, err := os.Stat(path)
		if err != nil {
			return nil, "", err
		}
		if st.IsDir() {
			continue
		}
		if !st.Mode().IsRegular() {
			return nil, "", fmt.Errorf("%s is not a regular file (%s): remove it from the directory of logs", path, kind(st.Mode()))
		}
		l, err := readLog(path)
		if err != nil {
			return nil, "", err
		}
		logs = append(logs, l)
	}
	if len(logs) == 0 {
		return nil, "", fmt.Errorf("%s holds no log (files starting with '.', .png, .svg, .md and subdirectories are not read)", dir)
	}
	var known []string
	for _, l := range logs {
		if l.HostsFrom != "" {
			known = append(known, l.Hosts[0], l.Hosts[1])
		}
	}
	slices.Sort(known)
	known = slices.Compact(known)
	// Longest first, so that "node10" is matched before "node1".
	slices.SortStableFunc(known, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, l := range logs {
		if l.HostsFrom != "" {
			continue
		}
		hs := NameHosts(l.Path, known)
		if hs == nil {
			return nil, "", fmt.Errorf("%s: no rank lines name its hosts, and its name does not split into two (as nodeA-nodeB.log or pair_nodeA_nodeB.txt do)", l.Path)
		}
		l.Hosts, l.HostsFrom = [2]string{hs[0], hs[1]}, "file name"
	}
	if err := sameRanks(logs); err != nil {
		return nil, "", err
	}
	op, err = chooseOp(logs, op)
	if err != nil {
		return nil, "", err
	}
	for _, l := range logs {
		l.use(op)
	}
	// busbw and algbw differ by the op's bus factor: a log of each is no
	// comparison (sendrecv's factor is 1, but one rule for every op).
	var unit *Log
	for _, l := range logs {
		if len(l.Figure) == 0 {
			continue
		}
		if unit != nil && l.Unit != unit.Unit {
			return nil, "", fmt.Errorf("%s gives %s and %s only %s: compare logs that give the same figure", unit.Path, unit.Unit, l.Path, l.Unit)
		}
		unit = l
	}
	return logs, op, nil
}

// sameRanks refuses logs of runs of different sizes: a pairwise script
// that runs one GPU a host, then four, then eight (nccl_N2_G1_A_B.log,
// nccl_N2_G4_A_B.log, ...) leaves three logs of each pair whose busbw
// differ by what the host's own links add, not by the pair's network, and
// taken as repetitions of one pair they named a healthy host. Logs that
// do not say their ranks are not compared.
func sameRanks(logs []*Log) error {
	var first *Log
	for _, l := range logs {
		if l.Ranks == 0 {
			continue
		}
		if first == nil {
			first = l
		} else if l.Ranks != first.Ranks {
			return fmt.Errorf("%s ran on %d ranks and %s on %d: compare runs of one size (put each in a directory of its own)",
				first.Path, first.Ranks, l.Path, l.Ranks)
		}
	}
	return nil
}

// images are the extensions of files in the directory that are not read:
// the heatmaps isolate draws, and notes such as a README.md.
var images = map[string]bool{".png": true, ".svg": true, ".md": true}

// chooseOp returns op if some log measured it, else the one op that the
// logs measured.
func chooseOp(logs []*Log, op string) (string, error) {
	var ops []string
	for _, l := range logs {
		for _, o := range l.Ops {
			if !slices.Contains(ops, o) {
				ops = append(ops, o)
			}
		}
	}
	// Rows that do not name their op (hccl_test) count as the op compared.
	unnamed := slices.ContainsFunc(logs, func(l *Log) bool {
		return slices.ContainsFunc(l.recs, func(r results.Record) bool { return r.Op == "" })
	})
	switch {
	case len(ops) == 0 && !unnamed:
		return "", errors.New("no log in the directory has a single row (of nccl-tests, rccl-tests, hccl_test, nccom-test or hccl-test)")
	case op != "" && !slices.Contains(ops, op) && !unnamed:
		return "", fmt.Errorf("--op %s: no log measured it (they measured %s)", op, strings.Join(ops, ", "))
	case op != "":
		return op, nil
	case len(ops) == 0:
		return "", nil // rows, none of which names its op
	case len(ops) > 1:
		return "", fmt.Errorf("the logs measure several ops (%s): name the one to compare with --op", strings.Join(ops, ", "))
	}
	return ops[0], nil
}

// kind names what a file that is not regular is.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// median returns the median of vs (the mean of the middle two for an even
// count); NaN for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
