package main

import (
	"testing"
	"time"
)

// TestETALeft checks the time left on sweeps whose rows cost a + b*bytes:
// small rows done and large ones to come (where rows done times their mean
// said 0s), one size only, no row done, larger rows not slower, and sizes
// unknown (all 0).
func TestETALeft(t *testing.T) {
	const us = time.Microsecond
	cost := func(bytes int64) time.Duration { return 50*us + time.Duration(bytes)*time.Nanosecond } // 1 GB/s
	sweep := func(lo, hi int64) []int64 {
		var s []int64
		for b := lo; b <= hi; b *= 8 {
			s = append(s, b)
		}
		return s
	}
	costs := func(bytes []int64) []time.Duration {
		var w []time.Duration
		for _, b := range bytes {
			w = append(w, cost(b))
		}
		return w
	}
	total := func(bytes []int64) time.Duration {
		var d time.Duration
		for _, w := range costs(bytes) {
			d += w
		}
		return d
	}
	for _, tc := range []struct {
		name       string
		done, left []int64
		wall       []time.Duration // nil: cost(done)
		lo, hi     time.Duration
	}{
		{name: "small done, large left", done: sweep(8, 64<<10), left: sweep(512<<10, 1<<30),
			lo: total(sweep(512<<10, 1<<30)) * 9 / 10, hi: total(sweep(512<<10, 1<<30)) * 11 / 10},
		{name: "one size done", done: []int64{1 << 20, 1 << 20}, left: []int64{1 << 20, 1 << 20, 1 << 20},
			lo: 3 * cost(1<<20), hi: 3*cost(1<<20) + us},
		{name: "nothing done", left: []int64{1 << 20}, lo: 0, hi: 0},
		{name: "nothing left", done: []int64{8}, lo: 0, hi: 0},
		{name: "larger not slower", done: []int64{8, 1 << 20}, wall: []time.Duration{100 * us, 60 * us},
			left: []int64{1 << 30, 8}, lo: 160 * us, hi: 160 * us},
		{name: "sizes unknown", done: []int64{0, 0}, wall: []time.Duration{time.Second, 3 * time.Second},
			left: make([]int64, 5), lo: 10 * time.Second, hi: 10 * time.Second},
		{name: "negative fixed cost", done: []int64{1000, 2000, 3000}, wall: []time.Duration{0, 1500 * us, 3000 * us},
			left: []int64{4000}, lo: 3 * time.Millisecond, hi: 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wall := tc.wall
			if wall == nil {
				wall = costs(tc.done)
			}
			if got := etaLeft(tc.done, wall, tc.left); got < tc.lo || got > tc.hi {
				t.Errorf("etaLeft = %v, want %v to %v", got, tc.lo, tc.hi)
			}
		})
	}
}
