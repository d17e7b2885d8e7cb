package estimate

import (
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
	c := &Calibration{
		Base:   coll.Model{Alpha: 1e-6, Beta: 1e-10, Gamma: 1e-10},
		DTypes: []dtype.DType{dtype.FP32},
		Gamma:  map[dtype.DType]float64{dtype.FP32: 2e-10},
		Mem:    &MemConstants{Bytes: 64 << 20, Beta: 3e-10, Gamma: map[dtype.DType]float64{dtype.FP32: 4e-10}},
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
		m := c.Model(dtype.FP32, tc.bytes)
		if !near(m.Beta, tc.beta) || !near(m.Gamma, tc.gamma) {
			t.Errorf("%s: beta %.3g, gamma %.3g; want %.3g and %.3g", units.FormatSize(tc.bytes), m.Beta, m.Gamma, tc.beta, tc.gamma)
		}
	}
	c.Mem = nil
	if m := c.Model(dtype.FP32, 1<<30); m.Beta != 1e-10 || m.Gamma != 2e-10 {
		t.Errorf("without memory constants: beta %.3g, gamma %.3g; want the cached ones", m.Beta, m.Gamma)
	}
}

func near(x, y float64) bool { return x > 0.999*y && x < 1.001*y }
