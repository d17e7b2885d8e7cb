//go:build mpi && cgo

package mpi

import (
	"slices"
	"testing"

	"github.com/hccl-test/hccl-test/dtype"
)

// TestCapsNative: the data types and reductions the backend declares for
// --algo native are exactly those RunNative maps to MPI's, so a plan is
// refused before it starts for what RunNative would fail on: fp8 and
// mulsum.
func TestCapsNative(t *testing.T) {
	c := Backend{}.Capabilities()
	for _, dt := range dtype.All() {
		_, mapped := mpiTypes[dt]
		if declared := slices.Contains(c.NativeDTypes, dt); declared != mapped {
			t.Errorf("%v: declared %v, mapped to MPI %v", dt, declared, mapped)
		}
	}
	for _, op := range dtype.AllOps() {
		_, mapped := mpiOps[op]
		if declared := slices.Contains(c.NativeRedOps, op); declared != mapped {
			t.Errorf("%v: declared %v, mapped to MPI %v", op, declared, mapped)
		}
	}
	if slices.Contains(c.NativeDTypes, dtype.F8E4M3) || slices.Contains(c.NativeDTypes, dtype.F8E5M2) ||
		slices.Contains(c.NativeRedOps, dtype.MulSum) {
		t.Errorf("native declares fp8 or mulsum, which MPI has no type or operator for: %v %v", c.NativeDTypes, c.NativeRedOps)
	}
}
