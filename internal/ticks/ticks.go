// Package ticks is a cheap monotonic clock for timing many short
// intervals, such as a row's iterations and a rank's waits on its peers.
// On amd64 Linux, where the kernel keeps time by the CPU's time-stamp
// counter, a reading is that counter itself (RDTSC: 10 ns on this kind of
// virtual machine); elsewhere it is the monotonic clock, in nanoseconds. A
// reading of the monotonic clock goes through the kernel's vDSO, which
// fences the counter's read so that it waits for every load before it:
// 27-55 ns here, and more where those loads are a peer's cache lines, as
// in a wait (two such readings a wait made proc's 2-rank 1 KiB allreduce
// 10% slower, 20 interleaved pairs).
//
// Readings convert to time by the counter's rate, measured against the
// monotonic clock from the package's start: refined every millisecond (at
// the first conversion after it) for its first second, fixed after.
package ticks

import (
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Ticks is a reading of the clock, or a difference of two.
type Ticks int64

// useTSC says whether readings are the time-stamp counter's.
var useTSC = runtime.GOOS == "linux" && hasTSC && clocksourceIsTSC()

// base is a reading of both clocks at start, the anchor of the
// counter's rate; nanoseconds since base.mono are the fallback's readings.
var base = pairNow()

// pair is a reading of the counter and of the monotonic clock at the
// same moment.
type pair struct {
	mono time.Time
	tick Ticks
}

// pairTries bounds the attempts at a pair, and pairGap is the most that
// the two monotonic readings around a counter reading may be apart: more
// says the host took the CPU in between, which would put the pair's two
// readings that far apart (one 20 ms gap at start would have skewed the
// rate by 2% for good).
const (
	pairTries = 8
	pairGap   = 5 * time.Microsecond
)

// pairNow reads the counter between two readings of the monotonic clock
// and pairs it with their midpoint, again if they are more than pairGap
// apart (up to pairTries times).
func pairNow() pair {
	var p pair
	for range pairTries {
		before := time.Now()
		t := Ticks(0)
		if useTSC {
			t = Ticks(rdtsc())
		}
		after := time.Now()
		gap := after.Sub(before)
		p = pair{mono: before.Add(gap / 2), tick: t}
		if gap <= pairGap {
			break
		}
	}
	return p
}

// frozen holds the counter's rate (nanoseconds per tick, as float64
// bits) once it has been measured over calibrateFor; 0 before.
var frozen atomic.Uint64

// calibrateFor is how long the rate is refined before it is fixed: its
// error is then the two clocks' reading costs (tens of ns) over a second.
// A variable for the tests.
var calibrateFor = time.Second

// minSpan is the least time over which a rate is measured: a conversion
// sooner after start waits for it to pass (once, in a process).
const minSpan = 100 * time.Microsecond

// clocksourceIsTSC reports whether the kernel keeps time by the TSC,
// which it does only where the counter is steady and the same on every
// CPU.
func clocksourceIsTSC() bool {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}

// Now returns the clock's reading.
func Now() Ticks {
	if useTSC {
		return Ticks(rdtsc())
	}
	return Ticks(time.Since(base.mono))
}

// Duration returns n ticks as time.
func (n Ticks) Duration() time.Duration {
	if !useTSC {
		return time.Duration(n)
	}
	return time.Duration(math.Round(float64(n) * nsPerTick()))
}

// estimate is the counter's rate as last measured during calibrateFor,
// and the counter's reading when it was: conversions in between use it.
type estimate struct {
	rate float64 // nanoseconds per tick
	at   Ticks
}

// latest is the last estimate, nil before the first conversion.
var latest atomic.Pointer[estimate]

// refreshEvery is how often a conversion during calibrateFor measures
// the rate again. Measuring it takes two readings of the monotonic clock
// (a pair): at every conversion that was 4 a timed iteration in the
// harness, which reads its waits twice, and cost a 2-rank 1 KiB
// allreduce in shared memory a fifth of its time for the process's first
// second, which is all of a short run.
const refreshEvery = time.Millisecond

// nsPerTick returns the counter's rate: fixed once measured over
// calibrateFor, else the estimate measured within refreshEvery, else
// measured now.
func nsPerTick() float64 {
	if f := frozen.Load(); f != 0 {
		return math.Float64frombits(f)
	}
	if e := latest.Load(); e != nil && float64(Now()-e.at)*e.rate < float64(refreshEvery) {
		return e.rate
	}
	for time.Since(base.mono) < minSpan {
		runtime.Gosched()
	}
	now := pairNow()
	elapsed := now.mono.Sub(base.mono)
	rate := float64(elapsed) / float64(max(now.tick-base.tick, 1))
	latest.Store(&estimate{rate: rate, at: now.tick})
	if elapsed >= calibrateFor {
		frozen.Store(math.Float64bits(rate))
	}
	return rate
}
