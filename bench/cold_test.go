package bench

import (
	"context"
	"testing"

	"github.com/hccl-test/hccl-test/coll"
	"github.com/hccl-test/hccl-test/dtype"
	"github.com/hccl-test/hccl-test/payload"
)

// TestRunColdCacheEveryCollective: with --cache cold every collective,
// in and out of place, over every root, checks right on the rotated sets
// (the checked call runs on the set after the last timed one), and the
// header names the cache.
func TestRunColdCacheEveryCollective(t *testing.T) {
	p := smallPlan()
	p.Cache = CacheCold
	var c capture
	if _, err := Run(context.Background(), p, &c); err != nil {
		t.Fatal(err)
	}
	if c.header.Cache != "cold" {
		t.Errorf("header cache %q, want cold", c.header.Cache)
	}
	if len(c.records) != len(p.Rows()) {
		t.Fatalf("%d records, want %d", len(c.records), len(p.Rows()))
	}
	for _, r := range c.records {
		if r.Wrong != 0 {
			t.Errorf("%s %s %s root %d in place %v %d B: %d wrong", r.Op, r.DType, r.RedOp, r.Root, r.InPlace, r.Bytes, r.Wrong)
		}
	}
}

// TestColdCacheSets: a small row rotates through many disjoint sets, up
// to payload.MaxColdSets; a row whose one set is larger than twice the cache
// takes one; a warm cache, one set of the pool.
func TestColdCacheSets(t *testing.T) {
	p := smallPlan()
	p.Cache = CacheCold
	p.MaxBytes = 1 << 20
	r := &rankRunner{plan: p, bufs: &payload.BufferPool{}, llc: 1 << 20}
	if err := r.bufs.Cold.Alloc(p.coldRegionBytes()); err != nil {
		t.Fatal(err)
	}
	defer r.bufs.Free()
	for _, tc := range []struct {
		bytes     int64
		llc       int64
		want, max int
	}{
		{bytes: 1024, llc: 1 << 20, want: payload.MaxColdSets},
		{bytes: 64 << 10, llc: 1 << 20, want: 6}, // 2 MiB over 3 ranks x 128 KiB
		{bytes: 1 << 20, llc: 64 << 10, want: 1}, // one set is more than the cache twice
	} {
		r.llc = tc.llc
		row := Row{Op: coll.AllReduce, DType: dtype.Int32, RedOp: dtype.Sum, Root: -1, Bytes: tc.bytes, Count: int(tc.bytes / 4), Place: OutOfPlace}
		sets, _, err := r.bufferSets(row, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(sets) != tc.want {
			t.Errorf("%d B, cache %d B: %d sets, want %d", tc.bytes, tc.llc, len(sets), tc.want)
		}
		seen := map[*byte]bool{}
		for _, set := range sets {
			a := &set[0].Send[0]
			if seen[a] {
				t.Errorf("%d B: two sets share their send buffer", tc.bytes)
			}
			seen[a] = true
		}
	}
	warm := &rankRunner{plan: smallPlan(), bufs: &payload.BufferPool{}}
	if err := warm.bufs.Ensure(context.Background(), 4096, false); err != nil {
		t.Fatal(err)
	}
	defer warm.bufs.Free()
	row := Row{Op: coll.AllReduce, DType: dtype.Int32, RedOp: dtype.Sum, Root: -1, Bytes: 1024, Count: 256, Place: OutOfPlace}
	if sets, _, _ := warm.bufferSets(row, 0, 3); len(sets) != 1 {
		t.Errorf("warm cache: %d sets, want 1", len(sets))
	}
}

// TestMemoryCountsColdSets: the estimate counts the cold-cache sets with
// --cache cold, at most payload.MaxColdSets of the largest row's and about
// twice the cache, and nothing with a warm cache or without payload.
func TestMemoryCountsColdSets(t *testing.T) {
	cold := func(e MemoryEstimate) int64 {
		for _, pt := range e.Parts {
			if pt.Name == "cold-cache buffer sets" {
				return pt.Bytes
			}
		}
		return 0
	}
	p := smallPlan()
	if got := cold(p.Memory()); got != 0 {
		t.Errorf("warm cache counts %d bytes of cold sets", got)
	}
	p.Cache = CacheCold
	need := 2 * p.bufferNeed(p.Ranks)
	got := cold(p.Memory())
	if want := int64(p.Ranks) * payload.MaxColdSets * need; got != want {
		t.Errorf("-e 4K cold: %d bytes of cold sets, want %d (64 sets a rank)", got, want)
	}
	p.MaxBytes = 64 << 20
	llc := payload.LLCBytes()
	if got, bound := cold(p.Memory()), 2*llc+int64(p.Ranks)*2*p.bufferNeed(p.Ranks)+int64(p.Ranks); got <= 0 || got > bound {
		t.Errorf("-e 64M cold: %d bytes of cold sets, want up to %d (twice the cache and a set a rank)", got, bound)
	}
	p.NoPayload = true
	if got := cold(p.Memory()); got != 0 {
		t.Errorf("without payload: %d bytes of cold sets", got)
	}
}
