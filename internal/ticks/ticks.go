// Package ticks is a cheap monotonic clock for adding up many short
// intervals, such as a rank's waits on its peers. On amd64 Linux, where
// the kernel keeps time by the CPU's time-stamp counter, a reading is that
// counter itself (RDTSC: 10 ns on this kind of virtual machine); elsewhere
// it is the monotonic clock, in nanoseconds. A reading of the monotonic
// clock goes through the kernel's vDSO, which fences the counter's read
// so that it waits for every load before it: 27-55 ns here, and more where
// those loads are a peer's cache lines, as in a wait (two such readings a
// wait made proc's 2-rank 1 KiB allreduce 10% slower, 20 interleaved
// pairs).
//
// Readings convert to time by the counter's rate, measured against the
// monotonic clock from the package's start: refined at every conversion
// for its first second, fixed after.
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

// The anchors of the counter's rate: a reading of each clock at start.
var (
	base     = time.Now()
	baseTick = read()
)

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

func read() Ticks {
	if useTSC {
		return Ticks(rdtsc())
	}
	return Ticks(time.Since(base))
}

// Now returns the clock's reading.
func Now() Ticks { return read() }

// Duration returns n ticks as time.
func (n Ticks) Duration() time.Duration {
	if !useTSC {
		return time.Duration(n)
	}
	return time.Duration(math.Round(float64(n) * nsPerTick()))
}

// nsPerTick returns the counter's rate: fixed once measured over
// calibrateFor, else measured now.
func nsPerTick() float64 {
	if f := frozen.Load(); f != 0 {
		return math.Float64frombits(f)
	}
	elapsed := time.Since(base)
	for elapsed < minSpan {
		runtime.Gosched()
		elapsed = time.Since(base)
	}
	t := read()
	rate := float64(elapsed) / float64(max(t-baseTick, 1))
	if elapsed >= calibrateFor {
		frozen.Store(math.Float64bits(rate))
	}
	return rate
}
