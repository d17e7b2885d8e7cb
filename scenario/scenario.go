// Package scenario is the step-scenario harness (hccl-test scenario FILE):
// it runs one training or inference step, compute phases and collectives
// in several communication domains, on every rank, and says which
// domain's links the step is most sensitive to. It stands beside the sweep
// (package bench), not inside it: both run on the packages they share
// (world, payload, runctl, estimate), and neither imports the other.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/world"
)

// A scenario (hccl-test scenario FILE) is one training or inference step
// described in JSON: an ordered list of compute phases and collectives, each
// collective in a communication domain. This file reads and checks it;
// run.go runs it.

// WorldDomain is the domain name of collectives over every rank.
const WorldDomain = "world"

// Limits on a scenario file, so that a typo cannot ask for more than any
// machine could run.
const (
	scenMaxRanks      = 4096
	scenMaxSteps      = 256
	scenMaxIterations = 1000
	scenMaxCalls      = 1000
	scenMaxCompute    = 10 * time.Second
	scenMaxStepBytes  = 1 << 30
	scenMaxSlowdown   = 1000 // percent
	scenMaxFileBytes  = 1 << 20
)

// MaxFileBytes is the largest scenario file Parse reads;
// a caller reading the file stops there too.
const MaxFileBytes = scenMaxFileBytes

// Scenario is a checked scenario file: everything needed to run it.
type Scenario struct {
	Name   string
	Ranks  int
	Layout world.Layout // Sizes nil when the file gives no groups
	// Kinds lists the domains the file's groups name, in GroupKinds order.
	Kinds      []string
	Iterations int // timed iterations of the step, per run
	Warmup     int // untimed iterations before them
	// Slowdown is how much slower, in percent, each domain's links are
	// made in its sensitivity run.
	Slowdown float64
	Steps    []Step
}

// Step is one step of a scenario: a compute phase (Compute > 0) or a
// collective.
type Step struct {
	Name    string
	Compute time.Duration
	// Group is the collective's domain: a kind of GroupKinds, or
	// WorldDomain.
	Group string
	Op    coll.Op
	DType dtype.DType
	RedOp dtype.ReduceOp // 0 for collectives that do not reduce
	Root  int            // -1 for collectives without a root
	// Bytes is the size moved, as the sweep reports it (the file's size
	// rounded down to whole elements); Elems is coll.Args.Count.
	Bytes int64
	Elems int
	// Calls is how many times the collective runs per step (the file's
	// count).
	Calls int
	// Overlap starts the collective without blocking before the compute
	// phase just before it, and waits for it right after that phase.
	Overlap bool
	// Draws are a variable-size collective's counts (the file's traffic),
	// nil for the others: one for a routing drawn once (draw=fixed), a
	// matrix file or the spread pattern; else one per iteration up to
	// MaxDraws, the generator's iterations 0, 1, ..., which iteration i
	// of every run (its warm-up, timed and checked iterations counted
	// together) takes in turn, draw i mod len(Draws).
	Draws []Drawn
}

// MaxDraws is the most matrices a routed step draws, as a sweep's row
// does: its iterations take them in turn.
const MaxDraws = 16

// Drawn is one draw of a routed step: its counts and its matrix's
// figures.
type Drawn struct {
	Counts  *coll.Counts
	Traffic traffic.Summary
}

// BufferBytes returns the send and receive bytes the step's buffers take
// on each of its group's n ranks: the collective's at the step's size, or
// a variable-size one's largest row and column of its draws.
func (s Step) BufferBytes(n int) (send, recv int64) {
	if s.Draws == nil {
		return s.Op.BufferBytes(n, s.Bytes)
	}
	for _, d := range s.Draws {
		for r := range n {
			sd, rc := s.Op.Desc().VLengths(r, d.Counts)
			send, recv = max(send, int64(sd*s.DType.Size())), max(recv, int64(rc*s.DType.Size()))
		}
	}
	return send, recv
}

// IsCompute reports whether the step is a compute phase.
func (s Step) IsCompute() bool { return s.Compute > 0 }

// Overrides are command-line choices that replace a file's values;
// zero values keep the file's.
type Overrides struct {
	Ranks int
	// RanksFrom says where Ranks came from, for messages: "-p 4".
	RanksFrom  string
	Iterations int
	Slowdown   string
}

// scenFile is the JSON form of a scenario file.
type scenFile struct {
	Name       string            `json:"name"`
	Ranks      *int              `json:"ranks"`
	Groups     string            `json:"groups"`
	Iterations *int              `json:"iterations"`
	Warmup     *int              `json:"warmup"`
	Slowdown   string            `json:"slowdown"`
	Steps      []json.RawMessage `json:"steps"`
}

// scenFileStep is the JSON form of one step.
type scenFileStep struct {
	Name    string          `json:"name"`
	Compute string          `json:"compute"`
	Group   string          `json:"group"`
	Op      string          `json:"op"`
	DType   string          `json:"dtype"`
	RedOp   string          `json:"redop"`
	Root    *int            `json:"root"`
	Size    json.RawMessage `json:"size"`
	Count   *int            `json:"count"`
	Overlap *bool           `json:"overlap"`
	// Traffic is a variable-size collective's counts (a traffic spec),
	// Transpose alltoallv's matrix turned around (a combine).
	Traffic   string `json:"traffic"`
	Transpose *bool  `json:"transpose"`
}

// Parse reads and checks a scenario file's contents, with ov's
// values in place of the file's. Errors name the field or the step (from
// 1) that is wrong.
func Parse(data []byte, ov Overrides) (*Scenario, error) {
	if len(data) > scenMaxFileBytes {
		return nil, fmt.Errorf("%d bytes: a scenario file is at most %d", len(data), scenMaxFileBytes)
	}
	var f scenFile
	if err := scenDecode(data, &f); err != nil {
		return nil, err
	}
	if err := scenDuplicateKey(data); err != nil {
		return nil, err
	}
	sc := &Scenario{Name: f.Name, Iterations: 20, Warmup: 3, Slowdown: 50}
	ranksFrom := "ranks"
	switch {
	case ov.Ranks != 0:
		sc.Ranks, ranksFrom = ov.Ranks, ov.RanksFrom
	case f.Ranks == nil:
		return nil, errors.New("ranks: missing (the world size, e.g. \"ranks\": 8)")
	default:
		sc.Ranks = *f.Ranks
		ranksFrom = fmt.Sprintf("ranks %d", sc.Ranks)
	}
	if sc.Ranks < 1 || sc.Ranks > scenMaxRanks {
		return nil, fmt.Errorf("%s: want 1 to %d ranks", ranksFrom, scenMaxRanks)
	}
	if f.Groups != "" {
		l, kinds, err := world.ParseLayoutOf("groups", f.Groups, sc.Ranks, ranksFrom)
		if err != nil {
			return nil, err
		}
		sc.Layout, sc.Kinds = l, kinds
	}
	if f.Iterations != nil {
		sc.Iterations = *f.Iterations
	}
	iterFrom := "iterations"
	if ov.Iterations != 0 {
		sc.Iterations, iterFrom = ov.Iterations, "--iters"
	}
	if sc.Iterations < 1 || sc.Iterations > scenMaxIterations {
		return nil, fmt.Errorf("%s %d: want 1 to %d timed iterations", iterFrom, sc.Iterations, scenMaxIterations)
	}
	if f.Warmup != nil {
		sc.Warmup = *f.Warmup
	}
	if sc.Warmup < 0 || sc.Warmup > scenMaxIterations {
		return nil, fmt.Errorf("warmup %d: want 0 to %d iterations", sc.Warmup, scenMaxIterations)
	}
	slow, slowFrom := f.Slowdown, "slowdown"
	if ov.Slowdown != "" {
		slow, slowFrom = ov.Slowdown, "--slowdown"
	}
	if slow != "" {
		p, err := ParseSlowdown(slow)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", slowFrom, err)
		}
		sc.Slowdown = p
	}
	if len(f.Steps) == 0 {
		return nil, errors.New("steps: none given (want a list of compute phases and collectives)")
	}
	if len(f.Steps) > scenMaxSteps {
		return nil, fmt.Errorf("steps: %d given, at most %d", len(f.Steps), scenMaxSteps)
	}
	for i, raw := range f.Steps {
		st, err := sc.parseStep(i, raw)
		if err != nil {
			return nil, err
		}
		sc.Steps = append(sc.Steps, st)
	}
	if !slices.ContainsFunc(sc.Steps, func(s Step) bool { return !s.IsCompute() }) {
		return nil, errors.New("steps: no collective among them: nothing to measure")
	}
	return sc, nil
}

// ParseSlowdown reads a slowdown percentage: "50%" is 50.
func ParseSlowdown(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("%q: want a percentage such as 50%%", s)
	}
	if !(v >= 1 && v <= scenMaxSlowdown) {
		return 0, fmt.Errorf("%q: want 1%% to %d%%", s, scenMaxSlowdown)
	}
	return v, nil
}

// scenDecode decodes one JSON object into v, refusing unknown fields and
// anything after the object, with errors that say where.
func scenDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return scenJSONError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON object (want exactly one object)")
	}
	return nil
}

// scenJSONError rewords a decoding error: a syntax error with its line and
// column, a field of the wrong type with the field's name.
func scenJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := scenPosition(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ) && strings.HasPrefix(typ.Value, "number ") &&
		reflect.Int <= typ.Type.Kind() && typ.Type.Kind() <= reflect.Uintptr: // a whole number
		what := scenWholeNumber(strings.TrimPrefix(typ.Value, "number "))
		if typ.Field != "" {
			return fmt.Errorf("field %q: %s", typ.Field, what)
		}
		return errors.New(what)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("want a JSON %s, got %s", scenJSONKind(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("field %q: want a JSON %s, got %s", typ.Field, scenJSONKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("the JSON ends early (an object or string is not closed)")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// scenJSONKind names a Go kind as JSON users know it.
func scenJSONKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "bool":
		return "boolean (true or false)"
	case kind == "slice":
		return "list"
	case kind == "struct", kind == "map":
		return "object"
	}
	return kind
}

// scenPosition turns a byte offset into a line and column, from 1.
func scenPosition(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// GroupSize returns the ranks in each group of domain kind: the world's for
// WorldDomain, 0 for a domain the scenario does not have.
func (sc *Scenario) GroupSize(kind string) int {
	if kind == WorldDomain {
		return sc.Ranks
	}
	return sc.Layout.Size(kind)
}

// Domains returns the domains the scenario's collectives run in, in the
// order they first appear.
func (sc *Scenario) Domains() []string {
	var out []string
	for _, s := range sc.Steps {
		if !s.IsCompute() && !slices.Contains(out, s.Group) {
			out = append(out, s.Group)
		}
	}
	return out
}

// LayoutString describes the groups for the header: "tp=4 dp=2", or "none".
func (sc *Scenario) LayoutString() string {
	var parts []string
	for _, k := range sc.Kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, sc.Layout.Size(k)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// MemoryPerRank estimates what one rank holds to run the scenario: every
// collective's buffers, the algorithms' scratch space in each domain's
// communicator of every run (the baseline and one per domain), and the
// link probe's buffers.
func (sc *Scenario) MemoryPerRank() int64 {
	need := 2 * scenProbeSize(sc.Ranks)
	scratch := map[string]int64{}
	for _, s := range sc.Steps {
		if s.IsCompute() {
			continue
		}
		send, recv := s.BufferBytes(sc.GroupSize(s.Group))
		need += send + recv
		scratch[s.Group] = max(scratch[s.Group], 2*max(send, recv))
	}
	for _, b := range scratch {
		need += b * int64(1+len(scratch))
	}
	return need
}

// stepLabel names step i (from 0) in messages: `step 2 "tp allreduce"`, or
// `step 2` when it has no name.
func stepLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("step %d", i+1)
	}
	return fmt.Sprintf("step %d %q", i+1, name)
}
