package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// NCCLJSONVersion is the version of nccl-tests' JSON report that NCCLJSON
// writes (its JSON_FILE_VERSION).
const NCCLJSONVersion = 3

// NCCLJSONRun is what nccl-tests' JSON report says about a run that the
// Header does not: the command line, the environment, the sweep's bounds
// as numbers, and the processes.
type NCCLJSONRun struct {
	Args []string // the command line, the program first
	// Env is the environment the report lists, NAME=value each; the caller
	// chooses it (nccl-tests lists every variable, secrets too).
	Env                []string
	MinBytes, MaxBytes int64
	StepFactor         float64 // used when StepBytes is 0
	StepBytes          int64
	// Pid is this process's id, rank 0's, and every rank's when InProcess
	// (every rank a goroutine of it); the others' are not known here
	// (null, and their host "").
	Pid       int
	InProcess bool
	// PerProcess is how many ranks each process hosts when they are not
	// all in one (tcp's -t x -g); 0 or 1 is one.
	PerProcess int
}

// NCCLJSON writes nccl-tests' JSON report (its -J FILE), schema version 3:
// one JSON object with "version", "start_time", "args", "env",
// "nccl_version" (null), "config" (with one device per rank, each a CPU
// here), "results", "out_of_bounds", "average_bus_bandwidth", "errors" and
// "end_time", its quirks kept (booleans as the strings "true" and
// "false", the root a string padded to six columns, nwrong null when not
// checked) so that nccl-tests' own tools read it. One result holds a
// size's out-of-place and in-place measurements, either null when the
// placement was not measured.
//
// The object is written as the run goes: the head at Begin, each result
// as soon as both its halves are known, the rest at End, so that memory
// does not grow with the rows (-N 0 runs for hours). A run that ends
// early still ends the object, with the error in "errors"; only a file cut
// off by a signal is not whole. Numbers are written with 15 significant
// digits, as CSV writes them, so the two give the same figures.
// NCCLJSON is not safe for concurrent use.
type NCCLJSON struct {
	w       io.Writer
	run     NCCLJSONRun
	h       Header
	pending *Record // an out-of-place result waiting for its in-place half
	results int     // results written
	// wrongRows counts records with wrong elements (out_of_bounds), and
	// busbw the mean bus bandwidth over every record (nccl-tests' average
	// over all sizes and both placements).
	wrongRows int
	busbw     AlgoBusBW
	buf       bytes.Buffer
	err       error // first error; later calls return it
}

// NewNCCLJSON returns an NCCLJSON writing to w. If w has a Flush method
// (a *bufio.Writer) it is called after every result.
func NewNCCLJSON(w io.Writer, run NCCLJSONRun) *NCCLJSON { return &NCCLJSON{w: w, run: run} }

// ncclTime is how nccl-tests writes start_time and end_time (local time).
const ncclTime = "2006-01-02 15:04:05"

// Begin implements Sink: it writes the object's head, up to the opening
// of the results list.
func (j *NCCLJSON) Begin(h Header) error {
	j.h = h
	b := &j.buf
	b.Reset()
	fmt.Fprintf(b, `{"version":%d,"start_time":%s,"args":%s,"env":%s,"nccl_version":null,"config":{`,
		NCCLJSONVersion, jstr(h.Started.Format(ncclTime)), jstrs(j.run.Args), jstrs(j.run.Env))
	// As nccl-tests: one device entry per process (its first rank), and
	// ngpus ranks in each; every rank is a goroutine of rank 0's process
	// when InProcess.
	per := max(1, j.run.PerProcess)
	if j.run.InProcess {
		per = max(1, h.Ranks)
	}
	fmt.Fprintf(b, `"nthreads":1,"ngpus":%d,"minimum_bytes":%d,"maximum_bytes":%d,`, per, j.run.MinBytes, j.run.MaxBytes)
	if j.run.StepBytes > 0 {
		fmt.Fprintf(b, `"step_bytes":%d,`, j.run.StepBytes)
	} else {
		fmt.Fprintf(b, `"step_factor":%s,`, jnum(j.run.StepFactor))
	}
	// validation is -c's count of checked runs; blocking_collectives is
	// nccl-tests' -z 1 (a barrier after each op).
	fmt.Fprintf(b, `"warmup_iters":%d,"iterations":%d,"aggregated_iterations":%d,"validation":%d,"graph":0,`+
		`"blocking_collectives":%q,"per_iter_timing":%q,"per_iter_skip":0,"parallel_init":"false","devices":[`,
		h.Warmup, h.Iters, max(h.AggIters, 1), checkIters(h), strconv.FormatBool(h.Blocking == 1), strconv.FormatBool(h.Stats))
	for p := range max(1, (h.Ranks+per-1)/per) {
		if p > 0 {
			b.WriteByte(',')
		}
		// Rank 0 writes the report: only its own process and host are
		// known here.
		pid, host := "null", ""
		if p == 0 {
			pid, host = strconv.Itoa(j.run.Pid), h.Host
		}
		fmt.Fprintf(b, `{"rank":%d,"group":0,"pid":%s,"hostname":%s,"device":0,"device_hex":"","device_info":%s}`,
			p*per, pid, jstr(host), jstr("CPU, --backend "+h.Backend))
	}
	b.WriteString(`]},"results":[`)
	return j.flushBuf()
}

// Write implements Sink: it writes the result of r's size, or holds an
// out-of-place measurement until its in-place half arrives.
func (j *NCCLJSON) Write(r Record) error {
	if r.Wrong > 0 {
		j.wrongRows++
	}
	if !math.IsNaN(r.BusBW) {
		addToMean(&j.busbw.BusBW, &j.busbw.Rows, r.BusBW)
	}
	if !r.InPlace {
		if err := j.writePending(); err != nil {
			return err
		}
		rc := r
		j.pending = &rc
		return j.err
	}
	if p := j.pending; p != nil && sameShape(*p, r) {
		j.pending = nil
		return j.writeResult(p, &r)
	}
	if err := j.writePending(); err != nil {
		return err
	}
	return j.writeResult(nil, &r)
}

// writePending writes a held out-of-place measurement alone.
func (j *NCCLJSON) writePending() error {
	if p := j.pending; p != nil {
		j.pending = nil
		return j.writeResult(p, nil)
	}
	return j.err
}

// writeResult writes one element of the results list; out or in may be
// nil, not both.
func (j *NCCLJSON) writeResult(out, in *Record) error {
	r := out
	if r == nil {
		r = in
	}
	b := &j.buf
	b.Reset()
	if j.results > 0 {
		b.WriteByte(',')
	}
	j.results++
	fmt.Fprintf(b, `{"size":%d,"count":%d,"type":%s,"redop":%s,"root":%s,"out_of_place":%s%s,"in_place":%s%s,"actual_iterations":%d,"experiment_name":%s}`,
		r.Bytes, r.Count, jstr(NCCLType(r.DType)), jstr(r.RedOp), jstr(fmt.Sprintf("%6d", r.Root)),
		placementJSON(out), j.perIterJSON("out_of_place_per_iter", out), placementJSON(in), j.perIterJSON("in_place_per_iter", in), r.Iters, jstr(r.Op))
	return j.flushBuf()
}

// placementJSON is one placement's measurement, or null.
func placementJSON(r *Record) string {
	if r == nil {
		return "null"
	}
	wrong := "null"
	if r.Checked() {
		wrong = jnum(float64(r.Wrong))
	}
	return fmt.Sprintf(`{"time":%s,"alg_bw":%s,"bus_bw":%s,"nwrong":%s}`, jnum(r.TimeUS), jnum(r.AlgBW), jnum(r.BusBW), wrong)
}

// End implements Sink: it closes the results list and writes the summary.
func (j *NCCLJSON) End(s Summary) error {
	if err := j.writePending(); err != nil {
		return err
	}
	b := &j.buf
	b.Reset()
	var errs []string
	if s.Err != nil {
		errs = append(errs, oneLine(s.Err.Error()))
	}
	fmt.Fprintf(b, `],"out_of_bounds":{"count":%d,"okay":%s},"average_bus_bandwidth":{"bandwidth":%s,"okay":%s},"errors":%s,"end_time":%s}`+"\n",
		j.wrongRows, jstr(strconv.FormatBool(j.wrongRows == 0)), jnum(j.busbw.BusBW), minBWOkay(j.busbw.BusBW, j.h.MinBusBW), jstrs(errs), jstr(time.Now().Format(ncclTime)))
	return j.flushBuf()
}

func (j *NCCLJSON) flushBuf() error {
	if j.err != nil {
		return j.err
	}
	if _, j.err = j.w.Write(j.buf.Bytes()); j.err == nil {
		j.err = flushTo(j.w)
	}
	return j.err
}

// ncclTypes are nccl-tests' names of the data types that have one.
var ncclTypes = map[string]string{
	"fp16": "half", "fp32": "float", "fp64": "double", "bf16": "bfloat16",
}

// NCCLType returns nccl-tests' name of a data type (float for fp32, half
// for fp16, ...); a type it has no other name for keeps ours.
func NCCLType(dt string) string {
	if n, ok := ncclTypes[dt]; ok {
		return n
	}
	return dt
}

// jstr is s as a JSON string.
func jstr(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// jstrs is ss as a JSON list of strings, [] when empty.
func jstrs(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

// jnum is v as a JSON number to 15 significant digits, as CSV writes it,
// or null when it is not a number.
func jnum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null"
	}
	return strconv.FormatFloat(roundSig(v, 15), 'f', -1, 64)
}

// minBWOkay is average_bus_bandwidth's okay: "unchecked" without
// NCCL_TESTS_MIN_BW, else whether the mean passed, as a string.
func minBWOkay(mean, min float64) string {
	if min <= 0 {
		return jstr("unchecked")
	}
	return jstr(strconv.FormatBool(!BelowMin(mean, min)))
}
