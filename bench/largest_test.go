package bench

import (
	"context"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
)

// TestLargestSize: the sweep's largest size is its last, below MaxBytes
// where the steps do not land on it.
func TestLargestSize(t *testing.T) {
	for _, tc := range []struct {
		name           string
		min, max, step int64
		factor         float64
		want           int64
	}{
		{"factor lands on -e", 1 << 10, 64 << 20, 0, 2, 64 << 20},
		{"factor 64 stops at 4M", 1 << 10, 64 << 20, 0, 64, 4 << 20},
		{"one size", 1 << 10, 1 << 10, 0, 2, 1 << 10},
		{"step of 1500", 1000, 5000, 1500, 0, 4000},
		{"step lands on -e", 1000, 4000, 1500, 0, 4000},
		{"no size", 2048, 1024, 0, 2, 1024},
		{"past MaxSizes", 1, 1 << 50, 0, 1.0000001, 1 << 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPlan()
			p.MinBytes, p.MaxBytes, p.StepBytes, p.StepFactor = tc.min, tc.max, tc.step, tc.factor
			if got := p.largestSize(); got != tc.want {
				t.Errorf("largestSize() = %d, want %d", got, tc.want)
			}
			if n, exact := p.sizeCount(); !exact || n == 0 || n > 1000 {
				return
			}
			if sizes := p.Sizes(); sizes[len(sizes)-1] != tc.want {
				t.Errorf("want %d, the last of Sizes %d", tc.want, sizes[len(sizes)-1])
			}
		})
	}
}

// TestBuffersSizedByLargestRow: a run allocates (and touches, before its
// first row) buffers and scratch space for its largest row, not for -e
// where the steps stop short of it. -b 1K -e 64M -f 64 on 8 ranks touched
// 2 GiB for rows of at most 4 MiB (buffers of 64 MiB and scratch of 128
// MiB a rank), which on a loaded host kept the first row from coming for
// over a minute.
func TestBuffersSizedByLargestRow(t *testing.T) {
	defer recordAllocations()()
	p := DefaultPlan()
	p.Ranks, p.Algo = 2, "ring"
	p.LinkGBps, p.LinkSource = 10, "given"
	p.MinBytes, p.MaxBytes, p.StepFactor = 1<<10, 16<<20, 64 // rows 1K, 64K, 4M
	p.Iters, p.Warmup = 1, 0
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(c.records) != 3 || c.records[2].Bytes != 4<<20 {
		t.Fatalf("rows %d, want 3 up to 4 MiB", len(c.records))
	}
	// The largest row's buffer: coll's layout of a 4 MiB allreduce; the
	// scratch space is twice that (coll.Comm.Reserve).
	s, r := coll.AllReduce.BufferBytes(2, 4<<20)
	limit := 2 * (max(s, r) + p.unalignBytes())
	holdState.Lock()
	defer holdState.Unlock()
	largest := 0
	for _, n := range holdState.allocs {
		largest = max(largest, n)
	}
	if int64(largest) > limit {
		t.Errorf("the largest allocation is %d bytes, more than %d for rows of at most 4 MiB of fp32 allreduce", largest, limit)
	}
}
