package scenario

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hccl-test/hccl-test/payload"
)

// FuzzParseScenario checks that Parse never panics, returns a
// scenario or an error and never both, and that a scenario it returns
// holds what the parser promises: counts within their limits, positive
// compute times, valid collectives whose sizes are whole elements, groups
// that divide the world, roots inside their group. The seeds are the
// example files, the test data and the parse tests' good files, each also
// with the command line's overrides.
func FuzzParseScenario(f *testing.F) {
	var files []string
	for _, pat := range []string{"../examples/*.json", "../examples/sim/*.json", "testdata/scenario/*.json"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatal("no seed files")
	}
	seeds := []string{goodScenario, smallScenario}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add([]byte(s), 0, 0, "")
		f.Add([]byte(s), 4, 7, "25%")
	}
	f.Fuzz(func(t *testing.T, data []byte, ranks, iters int, slowdown string) {
		ov := Overrides{Ranks: ranks, RanksFrom: "-p", Iterations: iters, Slowdown: slowdown}
		sc, err := Parse(data, ov)
		if (sc == nil) == (err == nil) {
			t.Fatalf("got scenario %v and error %v: want exactly one", sc, err)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		checkScenario(t, sc)
	})
}

// checkScenario fails t unless sc holds the invariants a parsed scenario
// promises.
func checkScenario(t *testing.T, sc *Scenario) {
	t.Helper()
	switch {
	case sc.Ranks < 1 || sc.Ranks > scenMaxRanks:
		t.Fatalf("ranks %d", sc.Ranks)
	case sc.Iterations < 1 || sc.Iterations > scenMaxIterations:
		t.Fatalf("iterations %d", sc.Iterations)
	case sc.Warmup < 0 || sc.Warmup > scenMaxIterations:
		t.Fatalf("warmup %d", sc.Warmup)
	case !(sc.Slowdown >= 1 && sc.Slowdown <= scenMaxSlowdown):
		t.Fatalf("slowdown %v", sc.Slowdown)
	case len(sc.Steps) < 1 || len(sc.Steps) > scenMaxSteps:
		t.Fatalf("%d steps", len(sc.Steps))
	}
	if sc.Layout.Split() {
		product := 1
		for _, s := range sc.Layout.Sizes {
			if s < 1 {
				t.Fatalf("layout %v", sc.Layout.Sizes)
			}
			product *= s
		}
		if product != sc.Ranks {
			t.Fatalf("layout %v multiplies to %d, not %d ranks", sc.Layout.Sizes, product, sc.Ranks)
		}
	}
	collectives := 0
	for i, s := range sc.Steps {
		if s.IsCompute() {
			if s.Compute > scenMaxCompute || s.Root != -1 || s.Op != 0 || s.Overlap {
				t.Fatalf("step %d: compute step %+v", i+1, s)
			}
			continue
		}
		collectives++
		n := sc.GroupSize(s.Group)
		switch {
		case s.Compute != 0:
			t.Fatalf("step %d: a collective with compute %v", i+1, s.Compute)
		case !s.Op.Valid() || !s.DType.Valid():
			t.Fatalf("step %d: op %v dtype %v", i+1, s.Op, s.DType)
		case s.Op.Reduces() != s.RedOp.Valid() || !s.Op.Reduces() && s.RedOp != 0:
			t.Fatalf("step %d: %v with redop %v", i+1, s.Op, s.RedOp)
		case n < 1 || sc.Ranks%n != 0:
			t.Fatalf("step %d: group %q of %d ranks in a world of %d", i+1, s.Group, n, sc.Ranks)
		case s.Op.Rooted() && (s.Root < 0 || s.Root >= n), !s.Op.Rooted() && s.Root != -1:
			t.Fatalf("step %d: %v with root %d in a group of %d", i+1, s.Op, s.Root, n)
		case s.Bytes < 1 || s.Bytes > scenMaxStepBytes || s.Elems < 1:
			t.Fatalf("step %d: %d bytes, %d elements", i+1, s.Bytes, s.Elems)
		case s.Calls < 1 || s.Calls > scenMaxCalls:
			t.Fatalf("step %d: %d calls", i+1, s.Calls)
		case s.Overlap && (i == 0 || !sc.Steps[i-1].IsCompute() || sc.Steps[i-1].Overlap):
			t.Fatalf("step %d: overlapped, but not right after a compute phase", i+1)
		}
		if c, b := payload.RowCount(s.Op, s.DType, n, s.Bytes); c != s.Elems || b != s.Bytes {
			t.Fatalf("step %d: %d bytes as %d elements, not whole elements (%d, %d)", i+1, s.Bytes, s.Elems, c, b)
		}
	}
	if collectives == 0 {
		t.Fatal("no collective")
	}
	if m := sc.MemoryPerRank(); m <= 0 || m == math.MaxInt64 {
		t.Fatalf("memory per rank %d", m)
	}
	_ = sc.LayoutString()
	_ = sc.Domains()
}
