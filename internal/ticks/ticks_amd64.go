package ticks

// hasTSC: every amd64 CPU has the time-stamp counter.
const hasTSC = true

// rdtsc reads the time-stamp counter, without a fence (ticks_amd64.s).
func rdtsc() uint64
