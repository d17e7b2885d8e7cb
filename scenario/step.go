package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/internal/limits"
	"github.com/hccl-test/hccl-test/payload"
	"github.com/hccl-test/hccl-test/traffic"
	"github.com/hccl-test/hccl-test/units"
	"github.com/hccl-test/hccl-test/world"
)

// parseStep reads and checks step i (from 0) of the file.
func (sc *Scenario) parseStep(i int, raw json.RawMessage) (Step, error) {
	var f scenFileStep
	if err := scenDecode(raw, &f); err != nil {
		return Step{}, fmt.Errorf("step %d: %w", i+1, err)
	}
	st, err := sc.checkStep(i, f)
	if err != nil {
		return Step{}, fmt.Errorf("%s: %w", stepLabel(i, f.Name), err)
	}
	return st, nil
}

// checkStep turns the JSON form of step i into a checked step.
func (sc *Scenario) checkStep(i int, f scenFileStep) (Step, error) {
	if f.Compute != "" {
		return scenComputeStep(f)
	}
	st := Step{Name: f.Name, Root: -1, RedOp: 0, Calls: 1, Overlap: f.Overlap != nil && *f.Overlap}
	if f.Op == "" {
		return st, errors.New("neither compute nor op: a step is a compute phase (\"compute\": \"3ms\") or a collective (\"op\": \"allreduce\", ...)")
	}
	var err error
	if st.Op, err = coll.ParseOp(f.Op); err != nil {
		return st, fmt.Errorf("op: %w", err)
	}
	if st.Op.Desc().Variable() != (f.Traffic != "") {
		if f.Traffic == "" {
			return st, fmt.Errorf("op %v: its counts need \"traffic\" (docs/traffic.md: \"zipf:s=1.2,tokens=0\", ...)", st.Op)
		}
		return st, fmt.Errorf("traffic %q: %v takes no counts (alltoallv, allgatherv and reducescatterv do)", f.Traffic, st.Op)
	}
	if f.Transpose != nil && st.Op != coll.AllToAllV {
		return st, fmt.Errorf("transpose: only alltoallv's matrix turns around (a combine sends back what the dispatch sent)")
	}
	if err := sc.checkGroup(&st, f.Group); err != nil {
		return st, err
	}
	n := sc.GroupSize(st.Group)
	st.DType = dtype.FP32
	if f.DType != "" {
		if st.DType, err = dtype.Parse(f.DType); err != nil {
			return st, fmt.Errorf("dtype: %w", err)
		}
	}
	switch {
	case f.RedOp != "" && !st.Op.Reduces():
		return st, fmt.Errorf("redop %q: %v does not reduce (allreduce, reduce and reducescatter do)", f.RedOp, st.Op)
	case st.Op.Reduces():
		st.RedOp = dtype.Sum
		if f.RedOp != "" {
			if st.RedOp, err = dtype.ParseOp(f.RedOp); err != nil {
				return st, fmt.Errorf("redop: %w", err)
			}
		}
	}
	switch {
	case f.Root != nil && !st.Op.Rooted():
		return st, fmt.Errorf("root %d: %v has no root (broadcast, reduce, gather and scatter do)", *f.Root, st.Op)
	case st.Op.Rooted():
		st.Root = 0
		if f.Root != nil {
			st.Root = *f.Root
		}
		if st.Root < 0 || st.Root >= n {
			return st, fmt.Errorf("root %d: want a rank of the group, 0 to %d (%s groups have %d ranks)", st.Root, n-1, st.Group, n)
		}
	}
	if err := st.checkSize(f.Size, n); err != nil {
		return st, err
	}
	if f.Traffic != "" {
		if err := st.drawCounts(f.Traffic, f.Transpose != nil && *f.Transpose, n, sc.Warmup+sc.Iterations); err != nil {
			return st, err
		}
	}
	if f.Count != nil {
		st.Calls = *f.Count
	}
	if st.Calls < 1 || st.Calls > scenMaxCalls {
		return st, fmt.Errorf("count %d: want 1 to %d calls per step", st.Calls, scenMaxCalls)
	}
	if st.Overlap && (i == 0 || !sc.Steps[i-1].IsCompute() || sc.Steps[i-1].Overlap) {
		return st, errors.New("overlap: an overlapped collective must come right after a compute phase (it is started before that phase and waited for after it)")
	}
	return st, nil
}

// scenComputeStep checks a compute phase: a duration and nothing else.
func scenComputeStep(f scenFileStep) (Step, error) {
	var extra []string
	for _, x := range []struct {
		name string
		set  bool
	}{
		{"group", f.Group != ""}, {"op", f.Op != ""}, {"dtype", f.DType != ""}, {"redop", f.RedOp != ""},
		{"root", f.Root != nil}, {"size", len(f.Size) > 0}, {"count", f.Count != nil}, {"overlap", f.Overlap != nil},
	} {
		if x.set {
			extra = append(extra, x.name)
		}
	}
	if len(extra) > 0 {
		return Step{}, fmt.Errorf("a compute phase takes no %s (a collective is a step of its own)", strings.Join(extra, ", "))
	}
	// limits.Duration tells a misspelling from a value past every limit
	// (9999999999h overflows time.ParseDuration).
	d, err := limits.Duration(f.Compute, limits.GoDuration, 0)
	switch {
	case err != nil && !errors.Is(err, limits.ErrRange):
		return Step{}, fmt.Errorf("compute %q: want a duration such as 500us or 3ms", f.Compute)
	case err != nil || d <= 0 || d > scenMaxCompute:
		return Step{}, fmt.Errorf("compute %q: want more than 0 and at most %v", f.Compute, scenMaxCompute)
	}
	return Step{Name: f.Name, Compute: d, Root: -1}, nil
}

// checkGroup checks a collective's domain: one the file's groups give, or
// the world.
func (sc *Scenario) checkGroup(st *Step, g string) error {
	kind := strings.ToLower(strings.TrimSpace(g))
	switch {
	case kind == "":
		return fmt.Errorf("group: missing (want %s)", sc.groupChoices())
	case kind == WorldDomain:
	case !slices.Contains(world.GroupKinds, kind):
		return fmt.Errorf("group %q: unknown (want %s)", g, sc.groupChoices())
	case !slices.Contains(sc.Kinds, kind):
		return fmt.Errorf("group %q: not among the file's groups (want %s)", g, sc.groupChoices())
	}
	st.Group = kind
	return nil
}

// groupChoices lists the domains a collective may name.
func (sc *Scenario) groupChoices() string {
	return strings.Join(append(slices.Clone(sc.Kinds), WorldDomain), ", ")
}

// checkSize reads a collective's size (a number of bytes, or a string with
// a K/M/G suffix) and rounds it down to whole elements for n ranks.
func (st *Step) checkSize(raw json.RawMessage, n int) error {
	if len(raw) == 0 {
		return errors.New("size: missing (bytes per rank as the sweep counts them, e.g. \"8M\")")
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return fmt.Errorf("size %s: %w", raw, err)
		}
	}
	size, err := units.ParseSize(text)
	if err != nil {
		return err
	}
	if size > scenMaxStepBytes {
		return fmt.Errorf("size %q: at most %s per collective", text, units.HumanSize(scenMaxStepBytes))
	}
	st.Elems, st.Bytes = payload.RowCount(st.Op, st.DType, n, size)
	if st.Elems == 0 {
		return fmt.Errorf("size %q: less than one %v element per block (%v on %d ranks moves at least %d bytes)",
			text, st.DType, st.Op, n, st.Op.Blocks(n)*st.DType.Size())
	}
	return nil
}

// drawCounts sets a variable-size step's draws from its traffic spec on
// its group's n ranks: the matrices of iterations 0, 1, ... (one when the
// matrix does not change; else one per warm-up and timed iteration, up to
// MaxDraws) at the step's size (what a rank sends; for allgatherv and
// reducescatterv the total over the n), each turned around with
// transpose (a combine returns what a dispatch sent). Every process draws
// the same from the spec alone, the generator's seed advancing with the
// iteration.
func (st *Step) drawCounts(spec string, transpose bool, n, iters int) error {
	sp, err := traffic.ParseSpec(spec)
	if err != nil {
		return fmt.Errorf("traffic: %w", err)
	}
	g, err := traffic.NewGenerator(sp, n)
	if err != nil {
		return fmt.Errorf("traffic: %w", err)
	}
	size := st.Bytes
	if st.Op != coll.AllToAllV {
		size /= int64(n)
	}
	k := 1
	if !g.Fixed() {
		k = max(min(iters, MaxDraws), 1)
	}
	st.Draws = make([]Drawn, k)
	for i := range st.Draws {
		m, err := g.Matrix(i, size)
		if err != nil {
			return fmt.Errorf("traffic: draw %d: %w", i, err)
		}
		if transpose {
			if m, err = transposed(m, n); err != nil {
				return fmt.Errorf("traffic: %w", err)
			}
		}
		counts, err := coll.CountsOfBytes(n, st.DType.Size(), m.At)
		if err != nil {
			return fmt.Errorf("traffic: draw %d: %w", i, err)
		}
		st.Draws[i] = Drawn{Counts: counts, Traffic: traffic.Summarize(m)}
	}
	return nil
}

// transposed returns m of n ranks turned around: what rank d sent rank s
// in m, rank s sends rank d.
func transposed(m *traffic.Matrix, n int) (*traffic.Matrix, error) {
	t, err := traffic.NewMatrix(n)
	if err != nil {
		return nil, err
	}
	for s := range n {
		for d := range n {
			t.Set(s, d, m.At(d, s))
		}
	}
	return t, nil
}
