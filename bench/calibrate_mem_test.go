package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/units"
)

// TestCalibrationBySize: a row's model takes the cached constants up to
// calLarge, the ones measured from memory from the size they were
// measured at, and in between moves from one to the other with the log
// of the row's size.
func TestCalibrationBySize(t *testing.T) {
	c := &calibration{
		base:   coll.Model{Alpha: 1e-6, Beta: 1e-10, Gamma: 1e-10},
		dtypes: []dtype.DType{dtype.FP32},
		gamma:  map[dtype.DType]float64{dtype.FP32: 2e-10},
		mem:    &memConstants{bytes: 64 << 20, beta: 3e-10, gamma: map[dtype.DType]float64{dtype.FP32: 4e-10}},
	}
	tests := []struct {
		bytes       int64
		beta, gamma float64
	}{
		{1 << 10, 1e-10, 2e-10},
		{4 << 20, 1e-10, 2e-10},
		{16 << 20, 2e-10, 3e-10}, // halfway between 4 and 64 MiB on a log scale
		{64 << 20, 3e-10, 4e-10},
		{1 << 30, 3e-10, 4e-10},
	}
	for _, tc := range tests {
		m := c.model(dtype.FP32, tc.bytes)
		if !near(m.Beta, tc.beta) || !near(m.Gamma, tc.gamma) {
			t.Errorf("%s: beta %.3g, gamma %.3g; want %.3g and %.3g", units.FormatSize(tc.bytes), m.Beta, m.Gamma, tc.beta, tc.gamma)
		}
	}
	c.mem = nil
	if m := c.model(dtype.FP32, 1<<30); m.Beta != 1e-10 || m.Gamma != 2e-10 {
		t.Errorf("without memory constants: beta %.3g, gamma %.3g; want the cached ones", m.Beta, m.Gamma)
	}
}

func near(x, y float64) bool { return x > 0.999*y && x < 1.001*y }

// TestRunCalibratesMemory: a sweep with rows of at least calMemMin bytes
// measures beta and gamma again on its own buffers, and the header says
// at what size; one without such rows does not.
func TestRunCalibratesMemory(t *testing.T) {
	for _, maxBytes := range []int64{calMemMin, calMemMin / 4} {
		p := smallPlan()
		p.Ranks, p.Ops, p.DTypes, p.RedOps = 2, []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum}
		p.MinBytes, p.MaxBytes, p.Placements, p.Stats = maxBytes, maxBytes, []Placement{OutOfPlace}, true
		p.Iters, p.Warmup = 1, 0
		var c capture
		if _, err := Run(context.Background(), p, &c); err != nil {
			t.Fatal(err)
		}
		want := "from " + units.FormatSize(calMemMin) + ": beta"
		if got := strings.Contains(c.header.Model, want); got != (maxBytes >= calMemMin) {
			t.Errorf("rows of %s: header model %q; has %q: %v", units.FormatSize(maxBytes), c.header.Model, want, got)
		}
		if len(c.records) != 1 || !(c.records[0].ModelUS > 0) {
			t.Errorf("rows of %s: %d records, want one with a prediction", units.FormatSize(maxBytes), len(c.records))
		}
	}
}
