package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/hccl-test/hccl-test/backends"
	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/fielderr"
)

// nativeBackend stands in for mpi's declaration: own collectives for fp32
// and int32 with sum and max only. It never runs: the plans are refused.
type nativeBackend struct{}

func (nativeBackend) Name() string { return "native-test" }

func (nativeBackend) Capabilities() backends.Caps {
	return backends.Caps{Native: true, NativeDTypes: []dtype.DType{dtype.Int32, dtype.FP32},
		NativeRedOps: []dtype.ReduceOp{dtype.Sum, dtype.Max}}
}

func (nativeBackend) Run(context.Context, backends.Config, backends.RankFunc) error {
	return errors.New("native-test runs nothing")
}

func init() { backends.Register(nativeBackend{}) }

// TestValidateNative: --algo native is refused before any rank starts for
// a data type or a reduction that the backend's own collectives lack, in
// one line that names both; a reduction matters only for collectives that
// reduce. Every collective, the variable-size ones too, has a native call.
func TestValidateNative(t *testing.T) {
	names := fielderr.Names{Long: func(f fielderr.Field) string {
		return map[fielderr.Field]string{"Algo": "--algo", "DTypes": "--datatype", "RedOps": "--redop"}[f]
	}}
	tests := []struct {
		name   string
		ops    []coll.Op
		dts    []dtype.DType
		redops []dtype.ReduceOp
		want   string // "" when the plan is fine
	}{
		{"served", []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum, dtype.Max}, ""},
		{"fp8", []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32, dtype.F8E4M3}, []dtype.ReduceOp{dtype.Sum},
			"--algo native: native-test's own collectives have no f8e4m3 (they have: int32 fp32); use another --datatype or another --algo"},
		{"fp8 without reducing", []coll.Op{coll.AllGather}, []dtype.DType{dtype.F8E5M2}, []dtype.ReduceOp{dtype.Sum},
			"--algo native: native-test's own collectives have no f8e5m2 (they have: int32 fp32); use another --datatype or another --algo"},
		{"mulsum", []coll.Op{coll.Reduce}, []dtype.DType{dtype.Int32}, []dtype.ReduceOp{dtype.Sum, dtype.MulSum},
			"--algo native: native-test's own collectives have no mulsum reduction (they have: sum max); use another --redop or another --algo"},
		{"mulsum without reducing", []coll.Op{coll.AllGather, coll.Broadcast}, []dtype.DType{dtype.Int32}, []dtype.ReduceOp{dtype.MulSum}, ""},
		// MPI_Alltoallv, MPI_Allgatherv and MPI_Reduce_scatter serve the
		// variable-size collectives, under the same type and reduction
		// rules.
		{"variable-size", []coll.Op{coll.AllToAllV, coll.AllGatherV, coll.ReduceScatterV}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.Sum, dtype.Max}, ""},
		{"variable-size mulsum", []coll.Op{coll.ReduceScatterV}, []dtype.DType{dtype.FP32}, []dtype.ReduceOp{dtype.MulSum},
			"--algo native: native-test's own collectives have no mulsum reduction (they have: sum max); use another --redop or another --algo"},
		{"variable-size fp8", []coll.Op{coll.AllToAllV}, []dtype.DType{dtype.F8E4M3}, []dtype.ReduceOp{dtype.Sum},
			"--algo native: native-test's own collectives have no f8e4m3 (they have: int32 fp32); use another --datatype or another --algo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan()
			p.Backend, p.Algo, p.LinkSource = "native-test", coll.Native, "given"
			p.Ops, p.DTypes, p.RedOps = tc.ops, tc.dts, tc.redops
			err := p.validateAlgos()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *fielderr.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a field error", err)
			}
			if got := fe.Format(names); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
