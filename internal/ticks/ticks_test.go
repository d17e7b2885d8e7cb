package ticks

import (
	"math"
	"testing"
	"time"
)

// TestDurationAgrees: an interval read on this clock and converted
// agrees with the monotonic clock's reading of the same interval, within
// 2% and the two clocks' reading costs, early after start (the rate
// still being measured) and once the rate is fixed.
func TestDurationAgrees(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sleep time.Duration
	}{
		{"short", 2 * time.Millisecond},
		{"longer", 30 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m0, t0 := time.Now(), Now()
			time.Sleep(tc.sleep)
			t1, m1 := Now(), time.Now()
			want := m1.Sub(m0)
			got := (t1 - t0).Duration()
			if diff := (got - want).Abs(); diff > want/50+20*time.Microsecond {
				t.Errorf("%v of ticks, the monotonic clock read %v (tsc %v)", got, want, useTSC)
			}
		})
	}
}

// TestRateFixed: once measured over calibrateFor the rate is fixed, and
// conversions after agree with the monotonic clock as before.
func TestRateFixed(t *testing.T) {
	if !useTSC {
		t.Skip("readings are nanoseconds here: no rate to measure")
	}
	calibrateAgain(t, time.Millisecond)
	time.Sleep(2 * time.Millisecond)
	rate := nsPerTick()
	if f := frozen.Load(); f == 0 || rate <= 0 {
		t.Fatalf("rate %v not fixed after %v", rate, calibrateFor)
	}
	m0, t0 := time.Now(), Now()
	time.Sleep(5 * time.Millisecond)
	t1, m1 := Now(), time.Now()
	if got, want := (t1 - t0).Duration(), m1.Sub(m0); (got - want).Abs() > want/50+20*time.Microsecond {
		t.Errorf("%v of ticks at the fixed rate, the monotonic clock read %v", got, want)
	}
	if nsPerTick() != rate {
		t.Errorf("the fixed rate moved")
	}
}

// TestPairBetween: a pair's counter reading and monotonic time both lie
// between readings taken just before and just after it.
func TestPairBetween(t *testing.T) {
	if !useTSC {
		t.Skip("no counter here: pairs carry the monotonic clock alone")
	}
	for range 1000 {
		m0, t0 := time.Now(), Now()
		p := pairNow()
		t1, m1 := Now(), time.Now()
		if p.tick < t0 || p.tick > t1 || p.mono.Before(m0) || p.mono.After(m1) {
			t.Fatalf("pair %v at %v outside %v..%v at %v..%v", p.tick, p.mono, t0, t1, m0, m1)
		}
	}
}

// TestNowMonotonic: readings in one goroutine never go back, across
// yields that may move it to another CPU.
func TestNowMonotonic(t *testing.T) {
	last := Now()
	for i := range 100000 {
		if i%100 == 0 {
			time.Sleep(0)
		}
		now := Now()
		if now < last {
			t.Fatalf("reading %d went back: %d after %d", i, now, last)
		}
		last = now
	}
}

// TestCalibrationRereadsRarely: while the rate is being measured, a
// conversion measures it again only when the last measurement is
// refreshEvery old, so that back-to-back conversions cost a counter
// reading, not two of the monotonic clock; and one that old is refreshed.
func TestCalibrationRereadsRarely(t *testing.T) {
	if !useTSC {
		t.Skip("readings are nanoseconds here: no rate to measure")
	}
	calibrateAgain(t, time.Hour)

	const calls = 10000
	start := time.Now()
	seen := map[*estimate]bool{}
	for range calls {
		if nsPerTick() <= 0 {
			t.Fatal("rate not positive")
		}
		seen[latest.Load()] = true
	}
	// One estimate a refreshEvery, and one more for the edges; and, a
	// refreshEvery being far longer than a conversion, a few at most.
	if most := min(int(time.Since(start)/refreshEvery)+2, calls/10); len(seen) > most {
		t.Errorf("%d conversions over %v made %d estimates, want at most %d", calls, time.Since(start), len(seen), most)
	}
	old := latest.Load()
	time.Sleep(2 * refreshEvery)
	nsPerTick()
	if latest.Load() == old {
		t.Errorf("an estimate %v old was used again", 2*refreshEvery)
	}
}

// BenchmarkDuration is the cost of one conversion while the rate is being
// measured and once it is fixed.
func BenchmarkDuration(b *testing.B) {
	for _, tc := range []struct {
		name   string
		frozen bool
	}{{"calibrating", false}, {"fixed", true}} {
		b.Run(tc.name, func(b *testing.B) {
			calibrateAgain(b, time.Hour)
			if tc.frozen {
				frozen.Store(math.Float64bits(nsPerTick()))
			}
			var sum time.Duration
			for i := range b.N {
				sum += Ticks(i).Duration()
			}
			_ = sum
		})
	}
}

// BenchmarkNow is the cost of one reading, beside the monotonic clock's.
func BenchmarkNow(b *testing.B) {
	b.Run("ticks", func(b *testing.B) {
		var sum Ticks
		for range b.N {
			sum += Now()
		}
		_ = sum
	})
	b.Run("time.Since", func(b *testing.B) {
		var sum time.Duration
		for range b.N {
			sum += time.Since(base.mono)
		}
		_ = sum
	})
}

// calibrateAgain starts the rate's measurement over for a test, to be
// fixed after d, and puts the package's state back when the test ends.
func calibrateAgain(tb testing.TB, d time.Duration) {
	was, wasFrozen := calibrateFor, frozen.Load()
	calibrateFor = d
	frozen.Store(0)
	tb.Cleanup(func() { calibrateFor = was; frozen.Store(wasFrozen) })
}
