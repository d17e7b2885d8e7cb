package bench

import (
	"testing"
	"time"

	"github.com/hccl-test/hccl-test/runctl"
)

// TestFirstDifference compares field lists as the ranks do.
func TestFirstDifference(t *testing.T) {
	p := DefaultPlan()
	q := p
	q.MaxBytes = 64 << 20
	b := p
	b.BenchTime = 300 * time.Millisecond
	for _, tc := range []struct {
		name        string
		rank0, mine []string
		want        string
	}{
		{"same", p.agreedFields(), p.agreedFields(), ""},
		{"maxbytes", p.agreedFields(), q.agreedFields(), "maxbytes=67108864 where rank 0 has maxbytes=33554432"},
		{"benchtime", p.agreedFields(), b.agreedFields(), "benchtime=300ms where rank 0 has benchtime=0s"},
		{"shorter", []string{"a=1", "b=2"}, []string{"a=1"}, "(none) where rank 0 has b=2"},
	} {
		if got := runctl.FirstDifference(tc.rank0, tc.mine); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
