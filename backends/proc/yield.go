package proc

import (
	"runtime"
	"time"
)

// yieldBudget is how long a waiting rank yields its CPU before it sleeps on
// its doorbell, when its host has more ranks than CPUs.
const yieldBudget = 100 * time.Microsecond

// yieldsPerCheck is how many times an oversubscribed waiting rank yields
// its CPU between readings of the clock (70-210 ns on virtual machines)
// and turns of its process's other goroutines (runtime.Gosched, a trip
// through the Go scheduler's locks): each was a fifth of a microsecond
// or more a yield, against a yield's microsecond or two, and the rank
// yields hundreds of thousands of times a second. 8 ranks on 2 CPUs, 1 KiB
// rd allreduce, median of 6 interleaved runs: 46.0 us checking every
// yield, 41.3 every 2, 40.7 every 4, 39.7 every 8, 38.1 every 16.
const yieldsPerCheck = 8

// yieldSlow is how long a run of yieldsPerCheck yields may take before
// the rank concludes that its CPU went to work other than its host's
// ranks. A rank given the CPU by a yield hands it back within microseconds
// when it has nothing to do, or after its copy or reduction (a 1 MiB one
// in 100-300 us); a thread of other work (a busy loop, a compiler) keeps
// it for its whole time slice, 0.75 to 3 ms. And a yield costs the
// yielding thread its place: the kernel's fair scheduler (EEVDF) charges
// it a slice, so a rank that yields while other work is runnable falls
// behind that work and runs late once what it waits for is in. A sleep on
// the doorbell keeps the rank's place and is woken when rung, as tcp's
// ranks are woken by their sockets. 8 ranks on 2 CPUs beside a hog of 4
// busy loops: a 1 KiB allreduce took 30 ms yielding, tcp's 13 ms.
const yieldSlow = 500 * time.Microsecond

// yieldPause is how long a rank's waits sleep at once after a slow yield,
// before one of them tries yielding again (a try costs a slice at most
// while the other work lasts: 3% of the time, at worst).
const yieldPause = 50 * time.Millisecond

// yieldWait is the oversubscribed rank's wait before it sleeps: more
// ranks than CPUs, so the rank waited for may be runnable but short of a
// CPU, and giving this one away (sched_yield) for a while lets it run at
// once, where a sleep costs a wake-up through the scheduler (8 ranks on 2
// CPUs ran a 1 KiB allreduce in 90-240 us this way, 700-1400 us without).
// It yields while ready reports false, at most yieldBudget, and reports
// whether ready came true. Yields that come back slowly (yieldSlow: the
// CPU went to other work) turn yielding off for yieldPause.
func (e *endpoint) yieldWait(ready func() bool) bool {
	start := e.clock()
	if start.Before(e.yieldOffUntil) {
		return false
	}
	last := start
	for i := 1; ; i++ {
		e.yieldCPU()
		done := ready()
		if !done && i%yieldsPerCheck != 0 {
			continue
		}
		now := e.clock()
		if now.Sub(last) > yieldSlow {
			e.slowYields++
			e.yieldOffUntil = now.Add(yieldPause)
			return done
		}
		if done {
			return true
		}
		runtime.Gosched()
		if now.Sub(start) >= yieldBudget {
			return false
		}
		last = now
	}
}

// yieldCPU gives the CPU away once: yieldCPU, or the test's e.yield.
func (e *endpoint) yieldCPU() {
	if e.yield != nil {
		e.yield()
		return
	}
	yieldCPU()
}

// clock returns the time: time.Now, or the test's e.now.
func (e *endpoint) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}
