package results

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/units"
)

// BenchFmt writes records in the Go benchmark format
// (golang.org/design/14313-benchmark-format), so that benchstat compares two
// runs: `benchstat old.txt new.txt`. Each record is one line, written and
// flushed as soon as it arrives, such as
//
//	BenchmarkAllReduce/backend=shm/ranks=8/dtype=fp16/redop=sum/size=1MiB 20 412000 ns/op 2.545 algbw-GB/s 4.454 busbw-GB/s
//
// The name identifies the row and nothing else, so that benchstat pairs the
// same row across files: the collective, backend, ranks, data type, redop
// (left out for collectives that do not reduce), root (for rooted
// collectives), size in binary units and "/inplace=true" for in-place
// rows. The algorithm that ran is left out: auto may choose another one in
// another build. A run that asks for several algorithms (--algo auto,ring)
// adds the one each row asked for, "/algo=ring", which benchstat -col
// /algo puts side by side. A sweep repeated with --runs gives one line per run,
// which is what benchstat's statistics need (10 or more per row); with -N,
// a "# cycle N" comment line starts each run's lines.
//
// File configuration lines ("key: value") carry the facts that make two runs
// comparable: goos, goarch, backend, ranks, placement, algo (as requested)
// and host. benchstat puts results with different file configuration into
// different tables and never compares them, so the facts that differ
// between two runs meant to be compared, the hccl-test version and the link
// bandwidth (measured anew by every run with --link-bw auto), are written as
// '#' comment lines, which readers of the format ignore. Compare across
// hosts with `benchstat -ignore host`, and backends or requested algorithms
// side by side with `-col backend` or `-col algo`.
//
// BenchFmt is not safe for concurrent use.
type BenchFmt struct {
	w      io.Writer
	bw     *benchfmt.Writer
	h      Header
	config []benchfmt.Config
	res    benchfmt.Result // reused for every line
	run    int             // the cycle of the last line (-N)
	err    error           // first error; later calls return it
}

// NewBenchFmt returns a BenchFmt writing to w. If w has a Flush method (a
// *bufio.Writer) it is called after every line.
func NewBenchFmt(w io.Writer) *BenchFmt {
	return &BenchFmt{w: w, bw: benchfmt.NewWriter(w)}
}

// Benchmark units other than ns/op, and the better direction benchstat-aware
// tools are told for them.
const (
	unitAlgBW = "algbw-GB/s"
	unitBusBW = "busbw-GB/s"
	// unitOverlapped is the time of an iteration overlapped with compute
	// (--overlap).
	unitOverlapped = "overlapped-ns/op"
	// unitCPU is the process CPU time per op (-C).
	unitCPU = "cpu-ns/op"
)

// maxHostList is the longest list of hosts a configuration line holds:
// far below the 64 KiB of a line that benchfmt reads.
const maxHostList = 8 << 10

// Begin implements Sink: it writes the unit metadata and the comment lines.
// The configuration lines go out with the first result, as benchfmt.Writer
// writes them.
func (b *BenchFmt) Begin(h Header) error {
	b.h = h
	for _, u := range []string{unitAlgBW, unitBusBW} {
		b.write(&benchfmt.UnitMetadata{
			UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u, Key: "better"},
			OrigUnit:        u, Value: "higher",
		})
	}
	b.comment("hccl-test %s  run %s", cmp.Or(h.Version, "-"), RunID(h)) // "-": a log of another tool
	if h.LinkGBps > 0 {
		b.comment("link bandwidth %s GB/s (%s)", strconv.FormatFloat(h.LinkGBps, 'g', 4, 64), h.LinkSource)
	} else {
		b.comment("link bandwidth unknown")
	}
	// A log's run (convert; hccl-test's own -J report too) was measured
	// elsewhere: it says its hosts, and not this machine's system and
	// architecture.
	b.config = headerConfig(h, h.Source == "")
	return b.flush()
}

// headerConfig returns the file configuration lines of a run with header
// h, as BenchFmt writes them: with the goos and goarch of this machine
// when machine is set (a run of this process), without them for a log
// read from elsewhere, which names its hosts instead.
func headerConfig(h Header, machine bool) []benchfmt.Config {
	var config []benchfmt.Config
	hosts, servers := "", ""
	if h.Source != "" && h.RankHosts.Servers() > 1 {
		hosts = h.RankHosts.HostList(maxHostList)
		servers = h.RankHosts.String()
	}
	kvs := [][2]string{
		{"backend", h.Backend}, {"ranks", strconv.Itoa(h.Ranks)},
		{"placement", h.Placement}, {"algo", h.Algo}, {"host", h.Host},
		{"hosts", hosts}, {"servers", servers},
		// Only another tool's rows (a log read by convert) say their
		// source: a line of our own would split hccl-test's runs from
		// those written before it into tables benchstat does not compare.
		{"source", strings.TrimPrefix(h.Source, SourceOurs)},
	}
	if machine {
		kvs = append([][2]string{{"goos", runtime.GOOS}, {"goarch", runtime.GOARCH}}, kvs...)
	}
	for _, kv := range kvs {
		// An empty value would read back as deleting the key.
		if v := oneLine(kv[1]); v != "" {
			config = append(config, benchfmt.Config{Key: kv[0], Value: []byte(v), File: true})
		}
	}
	// How the rows were measured, where it is not the default, so that
	// benchstat tells such files apart.
	for _, kv := range [][3]string{
		{"average", cmp.Or(h.Average, "max"), "max"}, {"agg_iters", strconv.Itoa(max(h.AggIters, 1)), "1"},
		{"blocking", strconv.Itoa(h.Blocking), "0"}, {"unalign", strconv.Itoa(h.Unalign), "0"},
	} {
		if kv[1] != kv[2] {
			config = append(config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
	}
	return config
}

// Write implements Sink: it writes and flushes one result line.
func (b *BenchFmt) Write(r Record) error {
	var values []benchfmt.Value
	if t := r.TimeUS; !math.IsNaN(t) && !math.IsInf(t, 0) {
		// benchstat tidies ns/op to sec/op, except 0, which it would
		// put in a table of its own: clamp to 1 ns.
		values = append(values, benchfmt.Value{Value: max(roundSig(t*1000, 5), 1), Unit: "ns/op"})
	}
	for _, v := range []benchfmt.Value{{Value: r.AlgBW, Unit: unitAlgBW}, {Value: r.BusBW, Unit: unitBusBW}} {
		if !math.IsNaN(v.Value) && !math.IsInf(v.Value, 0) {
			v.Value = roundSig(v.Value, 4)
			values = append(values, v)
		}
	}
	if b.h.CPUTime && r.CPUUS > 0 {
		values = append(values, benchfmt.Value{Value: max(roundSig(r.CPUUS*1000, 5), 1), Unit: unitCPU})
	}
	if r.ComputeUS > 0 && !math.IsNaN(r.TotalUS) {
		values = append(values, benchfmt.Value{Value: max(roundSig(r.TotalUS*1000, 5), 1), Unit: unitOverlapped})
	}
	if len(values) == 0 {
		return b.err // a line without values would not parse
	}
	if b.h.Cycles && r.Run != b.run {
		// A comment, which benchstat ignores: a name part or a
		// configuration line would keep it from pairing the cycles' rows.
		b.run = r.Run
		b.comment("cycle %d", r.Run)
	}
	b.res = benchfmt.Result{Config: b.config, Name: benchfmt.Name(b.name(r)), Iters: r.Iters, Values: values}
	b.write(&b.res)
	return b.flush()
}

// End implements Sink: it writes the footer as comment lines.
func (b *BenchFmt) End(s Summary) error {
	if b.h.Check {
		b.comment("wrong elements: %d", s.Wrong)
	}
	if s.Err != nil {
		b.comment("stopped early after %s: %s", Count(s.Rows, "row"), oneLine(s.Err.Error()))
	}
	return b.flush()
}

// name returns the benchmark name of r, without the "Benchmark" prefix.
func (b *BenchFmt) name(r Record) string {
	var sb strings.Builder
	sb.WriteString(opName(r.Op))
	part := func(k, v string) { fmt.Fprintf(&sb, "/%s=%s", k, nameValue(v)) }
	// A log of another tool may not say its backend, ranks or type:
	// such parts are left out rather than left empty.
	if b.h.Backend != "" {
		part("backend", b.h.Backend)
	}
	if b.h.Ranks > 0 {
		part("ranks", strconv.Itoa(b.h.Ranks))
	}
	if r.Group != "" {
		part("group", r.Group)
	}
	if r.DType != "" {
		part("dtype", r.DType)
	}
	if r.RedOp != "" && r.RedOp != "none" {
		part("redop", r.RedOp)
	}
	if r.Root >= 0 {
		part("root", strconv.Itoa(r.Root))
	}
	part("size", FormatBinarySize(r.Bytes))
	if r.InPlace {
		part("inplace", "true")
	}
	if r.Buckets > 1 {
		part("buckets", strconv.Itoa(r.Buckets))
	}
	if r.AlgoRequested != "" {
		part("algo", r.AlgoRequested)
	}
	return sb.String()
}

// opName returns the CamelCase benchmark name of a collective, as its
// descriptor gives it (coll.BenchName); one that is not ours gets a capital
// first letter.
func opName(op string) string {
	if n, ok := coll.BenchName(op); ok {
		return n
	}
	if op == "" {
		return "Unknown"
	}
	return nameValue(strings.ToUpper(op[:1]) + op[1:])
}

// nameValue keeps a name part from breaking the name's syntax: a space
// would end the name, a '/' or '=' would start another part.
func nameValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '=' || r <= ' ' {
			return '_'
		}
		return r
	}, s)
}

// FormatBinarySize formats a size in bytes exactly and briefly, for
// benchmark names: in the largest of KiB, MiB, GiB and TiB in which it is
// at least 1 with at most two decimals ("1KiB", "1.5MiB", "3GiB"), else in
// bytes ("1000B"). Different sizes never format alike, and benchstat sorts
// them by value with `-row /size@num`.
func FormatBinarySize(bytes int64) string { return units.FormatSize(bytes) }

// roundSig rounds v to n significant decimal digits, so that the file reads
// "412000 ns/op" rather than "412000.00000000006 ns/op".
func roundSig(v float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// oneLine makes s fit on one line of the file.
func oneLine(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s))
}

func (b *BenchFmt) comment(format string, args ...any) {
	if b.err == nil {
		_, b.err = fmt.Fprintf(b.w, "# %s\n", oneLine(fmt.Sprintf(format, args...)))
	}
}

func (b *BenchFmt) write(rec benchfmt.Record) {
	if b.err == nil {
		b.err = b.bw.Write(rec)
	}
}

func (b *BenchFmt) flush() error {
	if b.err == nil {
		b.err = flushTo(b.w)
	}
	return b.err
}
