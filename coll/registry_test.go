package coll

import "testing"

// TestPickFollowsModel: a Comm remembers its latest pick, and forgets it
// when its model changes, so the next call is chosen with the new model.
func TestPickFollowsModel(t *testing.T) {
	latency, bandwidth := DefaultModel, DefaultModel
	latency.Alpha *= 1e6
	bandwidth.Beta *= 1e6
	size := 0
	for b := 1 << 10; b <= 64<<20 && size == 0; b <<= 1 {
		x, err1 := Choose(AllReduce, Auto, b, 8, latency)
		y, err2 := Choose(AllReduce, Auto, b, 8, bandwidth)
		if err1 == nil && err2 == nil && x != y {
			size = b
		}
	}
	if size == 0 {
		t.Fatal("no size where a latency-bound and a bandwidth-bound model pick apart")
	}
	c := &Comm{size: 8}
	for _, m := range []Model{latency, bandwidth, latency} {
		c.SetModel(m)
		got, err := c.choose(AllReduce, Auto, size)
		want, _ := Choose(AllReduce, Auto, size, 8, m)
		if err != nil || got != want {
			t.Fatalf("%d bytes after SetModel: picked %q (%v), want %q", size, got, err, want)
		}
	}
}
