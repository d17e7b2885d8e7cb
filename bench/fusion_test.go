package bench

import (
	"strings"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
)

// TestFusionTooManyBuckets: a bucket count no size of the sweep can be
// split into is refused before the run (its rows used to vanish without a
// word); one that only the small sizes cannot take is measured where it
// fits and the header says where it is not.
func TestFusionTooManyBuckets(t *testing.T) {
	for _, tc := range []struct {
		name          string
		min, max      int64
		fusion        []int
		wantErr       string
		wantSkips     string // "" when no size is skipped
		wantBucketRow bool   // some row of 4096 buckets exists
	}{
		// fp32 allreduce splits at whole elements of 4 bytes: 4096 buckets need 16 KiB,
		// so of 1, 2, 4, 8, 16 KiB ... the first four are too small.
		{"1 KiB, 4096 buckets", 1024, 1024, []int{4096}, "Fusion 4096: no size of the sweep (at most 1024 bytes) splits into 4096 buckets", "", false},
		{"1 KiB, 4 buckets", 1024, 1024, []int{4}, "", "", false},
		{"1 KiB to 1 MiB", 1024, 1 << 20, []int{4, 4096}, "", "4096 buckets: some rows at 4 sizes up to 8192 bytes", true},
		{"only sizes that fit", 1 << 20, 1 << 20, []int{4096}, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Ops, p.DTypes, p.Ranks = []coll.Op{coll.AllReduce}, []dtype.DType{dtype.FP32}, 8
			p.MinBytes, p.MaxBytes, p.Fusion = tc.min, tc.max, tc.fusion
			err := p.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate: %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := p.FusionSkips(); (tc.wantSkips == "") != (got == "") || !strings.Contains(got, tc.wantSkips) {
				t.Errorf("FusionSkips() = %q; want %q", got, tc.wantSkips)
			}
			found := false
			for _, r := range p.Rows() {
				found = found || r.Buckets == 4096
			}
			if found != tc.wantBucketRow {
				t.Errorf("a row of 4096 buckets: %v, want %v", found, tc.wantBucketRow)
			}
		})
	}
}
