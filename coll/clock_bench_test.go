package coll

import (
	"testing"
	"time"
)

// BenchmarkClock is what one reading of the clock a wait takes costs:
// time.Now (wall and monotonic) against monoNow (monotonic alone).
func BenchmarkClock(b *testing.B) {
	var sink time.Duration
	b.Run("time.Now", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			sink += time.Since(start)
			start = time.Now()
		}
	})
	b.Run("monoNow", func(b *testing.B) {
		start := monoNow()
		for b.Loop() {
			sink += monoNow() - start
			start = monoNow()
		}
	})
	_ = sink
}
