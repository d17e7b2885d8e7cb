package peerlog

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// segment is what the reader knows of the test it is in: each test of a
// file (several concatenated, each with its header) is one.
type segment struct {
	n     int
	tool  string
	op    string
	dtype string // from hccl_test's command line (-d)
	redop string // from hccl_test's command line (-o)
	ranks int
	host  string
	iters int // timed iterations, from the header
	// hosts is the host of each rank, by rank, from the device lines: ""
	// for a rank not named (yet); hostsBad that a rank's line was past
	// maxRankLines.
	hosts    []string
	hostsBad bool
	rows     int // rows read in it
}

// parser reads a text log line by line.
type parser struct {
	log    Log
	lineNo int
	seg    segment
	table  *layout // the current table's layout, nil before its header
	places []bool  // the placement line above the next header
	csv    []string
	// hccl is set while reading an hccl_test table.
	hccl bool
}

func newParser() *parser { return &parser{seg: segment{n: 1}} }

// fresh starts a new segment if the current one has rows: a line that
// begins a test (its header, its device list) after another test's rows.
func (p *parser) fresh() {
	if p.seg.rows > 0 {
		p.seg = segment{n: p.seg.n + 1}
		p.table, p.places, p.csv, p.hccl = nil, nil, nil, false
	}
}

// base is a Row with what the segment knows.
func (p *parser) base(tool string) Row {
	if p.seg.tool != "" {
		tool = p.seg.tool
	}
	return Row{Tool: tool, Segment: p.seg.n, Line: p.lineNo, Op: p.seg.op, DType: p.seg.dtype, RedOp: p.seg.redop,
		Root: -1, Ranks: p.seg.ranks, Host: p.seg.host, Iters: p.seg.iters, Wrong: -1}
}

func (p *parser) emit(rows []Row) bool {
	for _, r := range rows {
		p.log.Rows = append(p.log.Rows, r)
		p.seg.rows++
	}
	if len(rows) > 0 {
		for len(p.log.Segments) < p.seg.n {
			p.log.Segments = append(p.log.Segments, Segment{})
		}
		if seg := &p.log.Segments[p.seg.n-1]; seg.Hosts == nil && p.seg.rows == len(rows) { // the test's first rows
			seg.Hosts = p.seg.allHosts()
		}
	}
	return len(rows) > 0
}

// addHost notes that rank ran on host.
func (s *segment) addHost(rank int, host string) {
	switch {
	case rank >= maxRankLines:
		s.hostsBad = true
		return
	case rank > 0 && rank <= len(s.hosts) && s.hosts[rank-1] == host:
		host = s.hosts[rank-1] // one string per host, not per line
	default:
		host = strings.Clone(host) // not the whole line's
	}
	for len(s.hosts) <= rank {
		s.hosts = append(s.hosts, "")
	}
	s.hosts[rank] = host
}

// allHosts returns the host of every rank by rank, nil unless the device
// lines named every rank from 0 to the last.
func (s *segment) allHosts() []string {
	if s.hostsBad || slices.Contains(s.hosts, "") {
		return nil
	}
	return s.hosts
}

// maxRankLines bounds the ranks whose hosts a test's device lines give:
// more than any cluster holds, and few enough that a log cannot make the
// reader hold more than a few MiB for them.
const maxRankLines = 1 << 20

// itersField reads the timed iterations of nccl-tests' header ("warmup
// iters: 5 iters: 20 agg iters: 1") and hccl_test's settings line
// ("iters is 20, warmup_iters is 10").
var itersField = regexp.MustCompile(`(?:^|[\s,])iters(?::| is)\s*(\d+)`)

// readIters sets the segment's iterations from s, if it gives them: the
// "iters" that is not "warmup iters" nor "agg iters".
func (p *parser) readIters(s string) {
	for _, m := range itersField.FindAllStringSubmatchIndex(s, -1) {
		before := strings.TrimSpace(s[:m[0]+1])
		if strings.HasSuffix(before, "warmup") || strings.HasSuffix(before, "agg") {
			continue
		}
		if n, err := strconv.Atoi(s[m[2]:m[3]]); err == nil && n > 0 && n < 1<<30 {
			p.seg.iters = n
		}
		return
	}
}

// Lines that say what test follows, and the devices it runs on.
var (
	testStart  = regexp.MustCompile(`^#\s*Collective test starting:\s*(\S+)`)
	deviceLine = regexp.MustCompile(`^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\b`)
	nccl1Dev   = regexp.MustCompile(`^#\s*Device\s+(\d+)\s+->`)
	binary     = regexp.MustCompile(`^(?:.*/)?([a-z][a-z0-9_]*_(?:perf|test)(?:_mpi)?)$`)
)

func (p *parser) line(raw string) {
	p.lineNo++
	p.log.Lines++
	s := clean(raw)
	if s == "" || !p.read(s) {
		p.log.Skipped++
	}
}

// read reads one cleaned line and reports whether it was data or a line
// the reader understood.
func (p *parser) read(s string) bool {
	switch {
	case s[0] == '{' || s[0] == '[' || s[0] == ']':
		// A '[' that starts no JSON may start a shell's prompt
		// ("[root@node-1 bin]# mpirun ..."): read on.
		if ok := p.jsonLine(s); ok || s[0] != '[' {
			return ok
		}
	case s[0] == '#':
		return p.comment(strings.TrimSpace(s[1:]))
	case strings.Contains(s, "|"):
		// Not a row of hccl_test's: perhaps its command line piped
		// to tee.
		if p.pipeLine(s) {
			return true
		}
	case strings.Count(s, ",") >= 7:
		return p.csvLine(s)
	}
	fields := strings.Fields(s)
	if l, ok := parseHeader(fields); ok { // nccom-test's header has no '#'
		p.fresh()
		l.tool = NccomTest
		p.table, p.places = l, nil
		return true
	}
	if p.table != nil {
		if p.emit(tableRow(fields, p.table, p.base(p.table.tool))) {
			return true
		}
	}
	if l := inferLayout(fields); l != nil && p.emit(tableRow(fields, l, p.base(orDefault(l.tool, NCCLTests)))) {
		p.table = l // the rows that follow, one cut short among them, are of the same table
		return true
	}
	return p.other(s, fields)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// comment reads a '#' line of nccl-tests' or rccl-tests' output (without
// its '#').
func (p *parser) comment(s string) bool {
	fields := strings.Fields(s)
	if m := testStart.FindStringSubmatch("# " + s); m != nil {
		p.fresh()
		p.seg.op = opName(m[1])
		return true
	}
	if m := deviceLine.FindStringSubmatch(s); m != nil {
		if p.seg.rows > 0 {
			p.fresh()
		}
		rank, _ := strconv.Atoi(m[1])
		if rank < 1<<24 {
			p.seg.ranks = max(p.seg.ranks, rank+1)
		}
		if rank == 0 {
			p.seg.host = m[2]
		}
		p.seg.addHost(rank, m[2])
		return true
	}
	if m := nccl1Dev.FindStringSubmatch("# " + s); m != nil {
		p.fresh()
		if d, err := strconv.Atoi(m[1]); err == nil && d < 1<<24 {
			p.seg.ranks = max(p.seg.ranks, d+1)
		}
		return true
	}
	switch {
	case strings.HasPrefix(s, "nccl-tests version"):
		p.fresh()
		p.seg.tool = NCCLTests
		return true
	case strings.HasPrefix(s, "nThread"):
		p.fresh()
		p.readIters(s)
		return true
	case strings.HasPrefix(s, "Using devices"):
		p.fresh()
		return true
	}
	if l, ok := parseHeader(fields); ok {
		p.fresh()
		if p.places != nil {
			l.setPlaces(p.places)
		}
		l.tool = NCCLTests
		p.table, p.places = l, nil
		return true
	}
	if w := placeWords(fields); w != nil {
		p.places = w
		return true
	}
	if len(fields) > 0 && strings.HasPrefix(fields[0], "(") && p.table != nil { // units line
		for _, f := range fields {
			switch f {
			case "(ms)":
				p.table.scale = 1000
			case "(us)":
				p.table.scale = 1
			}
		}
		return true
	}
	// A root shell's prompt before a pasted command line: "# mpirun -n 8
	// ./bin/all_reduce_test ...", as hccl_test's docs show it.
	return len(fields) > 0 && p.other(s, fields)
}

// other reads a line that is neither a row nor a header: a tool's version
// line, hccl_test's settings line, or a pasted command line that names
// the test.
func (p *parser) other(s string, fields []string) bool {
	switch {
	case strings.HasPrefix(s, "rccl-tests: Version"):
		p.fresh()
		p.seg.tool = RCCLTests
		return true
	case strings.HasPrefix(s, "the minbytes is"):
		p.fresh()
		p.seg.tool = HCCLTest
		p.readIters(s)
		return true
	}
	for i, f := range fields {
		if strings.HasSuffix(f, "nccom-test") {
			p.fresh()
			p.seg.tool = NccomTest
			p.commandLine(fields[i+1:], false)
			return true
		}
		if m := binary.FindStringSubmatch(f); m != nil && opName(m[1]) != "" {
			p.fresh()
			p.seg.op = opName(m[1])
			hccl := strings.HasSuffix(m[1], "_test")
			if hccl {
				p.seg.tool = HCCLTest
				p.launcher(fields[:i])
			}
			p.commandLine(fields[i+1:], hccl)
			return true
		}
	}
	return false
}

// commandLine reads a test's arguments: nccom-test's operation and -r
// ranks, hccl_test's -d type and -o reduction (nccl-tests' rows say
// those themselves).
func (p *parser) commandLine(args []string, hccl bool) {
	for i := 0; i < len(args); i++ {
		a, next := args[i], ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case p.seg.tool == NccomTest && (a == "-r" || a == "--nworkers"):
			if n, err := strconv.Atoi(next); err == nil && n > 0 && n < 1<<24 {
				p.seg.ranks = n
			}
			i++
		case p.seg.tool == NccomTest && !strings.HasPrefix(a, "-") && opName(a) != "":
			p.seg.op = opName(a)
		case hccl && (a == "-d" || a == "--datatype") && next != "":
			p.seg.dtype = dtypeName(next)
			i++
		case hccl && (a == "-o" || a == "--op") && next != "":
			p.seg.redop = redopName(next)
			i++
		}
	}
}

// launcher reads mpirun's -n/-np before an hccl_test binary: hccl_test
// runs one process per NPU, so that is its ranks.
func (p *parser) launcher(args []string) {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-n" || args[i] == "-np" {
			if n, err := strconv.Atoi(args[i+1]); err == nil && n > 0 && n < 1<<24 {
				p.seg.ranks = n
			}
		}
	}
}

// pipeLine reads hccl_test's header ("data_size(Bytes): | aveg_time(us):
// | alg_bandwidth(GB/s): | check_result:") and rows ("8192 | 25.31 |
// 0.32367 | success").
func (p *parser) pipeLine(s string) bool {
	parts := strings.Split(s, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if strings.HasPrefix(parts[0], "data_size") {
		p.fresh()
		p.seg.tool, p.hccl = HCCLTest, true
		return true
	}
	if len(parts) < 3 {
		return false
	}
	size, ok := parseSize(parts[0])
	t, bw := parseFigure(parts[1]), parseFigure(parts[2])
	if !ok || !t.ok || !bw.ok {
		return false
	}
	r := p.base(HCCLTest)
	r.Bytes = size
	// hccl_test measures out-of-place only.
	r.Known |= KnowPlace
	if t.known && t.v > 0 {
		r.TimeUS, r.Known = t.v, r.Known|KnowTime
	}
	if bw.known {
		r.AlgBW, r.Known = bw.v, r.Known|KnowAlgBW
	}
	if len(parts) > 3 {
		switch strings.ToLower(strings.Fields(parts[3] + " x")[0]) {
		case "success":
			r.Wrong = 0
		case "failed":
			r.Check = "failed"
		case "null":
			r.Check = "not checked"
		}
	}
	if r.Known&(KnowTime|KnowAlgBW) == 0 {
		return false
	}
	return p.emit([]Row{r})
}
